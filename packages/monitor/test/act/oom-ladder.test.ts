import { effectiveBatchOf, type LaunchSettings } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { nextOomSettings } from '../../src/act/oom-ladder.js'

const base: LaunchSettings = {
  device: 'cuda',
  gpus: 2,
  nodes: 1,
  microBatch: 8,
  gradAccum: 2,
  effectiveBatch: 32,
  gradCheckpointing: false,
  precision: 'fp32',
}

describe('nextOomSettings', () => {
  it('halves the micro-batch and doubles accumulation, keeping the effective batch', () => {
    const step = nextOomSettings(base, '8.9')
    expect(step).toMatchObject({ settings: { microBatch: 4, gradAccum: 4, effectiveBatch: 32 } })
    if ('settings' in step) expect(effectiveBatchOf(step.settings)).toBe(32)
  })

  it('keeps the product whole for odd micro-batches', () => {
    expect(nextOomSettings({ ...base, microBatch: 3, gradAccum: 1, effectiveBatch: 6 }, null)).toMatchObject({
      settings: { microBatch: 1, gradAccum: 3 },
    })
    expect(nextOomSettings({ ...base, microBatch: 5, gradAccum: 2, effectiveBatch: 20 }, null)).toMatchObject(
      {
        settings: { microBatch: 2, gradAccum: 5 },
      },
    )
  })

  it('then enables checkpointing, then mixed precision the hardware has, then gives up', () => {
    const one = { ...base, microBatch: 1, gradAccum: 16 }
    expect(nextOomSettings(one, '8.0')).toMatchObject({
      settings: { gradCheckpointing: true, precision: 'fp32' },
    })
    const ckpt = { ...one, gradCheckpointing: true }
    expect(nextOomSettings(ckpt, '8.6')).toMatchObject({ settings: { precision: 'bf16-mixed' } })
    expect(nextOomSettings(ckpt, '7.5')).toMatchObject({ settings: { precision: 'fp16-mixed' } })
    // A CPU steps to bf16 only with bf16 instructions, as the planner decides; without them fp32 is the last rung.
    expect(nextOomSettings({ ...ckpt, device: 'cpu', gpus: 0 }, null, true)).toMatchObject({
      settings: { precision: 'bf16-mixed' },
    })
    expect(nextOomSettings({ ...ckpt, device: 'cpu', gpus: 0 }, null, false)).toMatchObject({
      exhausted: true,
      tried: expect.arrayContaining(['precision is fp32 and this CPU has no native bf16']),
    })
    expect(nextOomSettings({ ...ckpt, precision: 'bf16-mixed' }, '8.6')).toMatchObject({ exhausted: true })
    expect(nextOomSettings({ ...ckpt, precision: null }, '8.6')).toMatchObject({ exhausted: true })
  })
})
