import type { LaunchSettings } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { replanForGpus } from '../../src/act/gpu-failover.js'

const four: LaunchSettings = {
  device: 'cuda',
  gpus: 4,
  nodes: 1,
  microBatch: 4,
  gradAccum: 2,
  effectiveBatch: 32,
  gradCheckpointing: false,
  precision: 'bf16-mixed',
}

describe('replanForGpus', () => {
  it('keeps the effective batch by raising accumulation', () => {
    expect(replanForGpus(four, 2).settings).toMatchObject({
      gpus: 2,
      microBatch: 4,
      gradAccum: 4,
      effectiveBatch: 32,
    })
    expect(replanForGpus(four, 1).settings).toMatchObject({
      gpus: 1,
      microBatch: 4,
      gradAccum: 8,
      effectiveBatch: 32,
    })
  })

  it('lowers the micro-batch when the division is not whole, and says when the batch cannot be kept', () => {
    expect(replanForGpus(four, 3).settings).toMatchObject({ gpus: 3, effectiveBatch: 33 })
    expect(replanForGpus(four, 3).changes.join(' ')).toMatch(/effective batch 32 → 33/)
    const six = { ...four, microBatch: 3, gradAccum: 2, gpus: 4, effectiveBatch: 24 }
    expect(replanForGpus(six, 3).settings).toMatchObject({ microBatch: 2, gradAccum: 4, effectiveBatch: 24 })
  })

  it('falls back to the CPU in fp32', () => {
    const next = replanForGpus(four, 0)
    expect(next.settings).toMatchObject({
      device: 'cpu',
      gpus: 0,
      precision: 'fp32',
      gradAccum: 8,
      effectiveBatch: 32,
    })
    expect(next.changes.join(' ')).toMatch(/the CPU/)
  })
})
