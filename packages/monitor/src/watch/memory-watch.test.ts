import { describe, expect, it } from 'vitest'
import type { Sample } from '../sampling/sampler.js'
import { MemoryWatch, memorySeries } from './memory-watch.js'

const GIB = 1024 ** 3
const MIB = 1024 ** 2
const reading = (index: number, used: number) => ({
  index,
  name: 'NVIDIA A100-SXM4-80GB',
  vendor: 'nvidia' as const,
  memoryUsedBytes: used,
  memoryTotalBytes: 80 * GIB,
  utilizationPercent: 100,
  temperatureC: 60,
  powerWatts: 390,
  powerLimitWatts: 400,
})
const sample = (gpus: ReturnType<typeof reading>[]): Sample => ({
  time: new Date(0),
  gpus,
  gpuSource: 'nvidia-smi',
  gpusFresh: true,
  problems: [],
  cpu: null,
  memory: { usedBytes: 20 * GIB, totalBytes: 64 * GIB },
  battery: null,
})

describe('memorySeries', () => {
  it('takes the GPUs in use, or host RAM when the run uses none', () => {
    expect(memorySeries(sample([reading(0, GIB), reading(1, GIB)]), [1]).map((s) => s.key)).toEqual(['gpu1'])
    expect(memorySeries(sample([reading(0, GIB)]), null).map((s) => s.key)).toEqual(['gpu0'])
    expect(memorySeries(sample([reading(0, GIB)]), [])).toEqual([
      { key: 'host', label: 'host RAM', usedBytes: 20 * GIB, totalBytes: 64 * GIB },
    ])
  })
})

describe('MemoryWatch', () => {
  it('reports a leak with the projected step and time, and an imminent OOM ten steps before capacity', () => {
    const watch = new MemoryWatch('step')
    const findings = []
    for (let step = 1; step <= 40; step += 1) {
      findings.push(
        ...watch.observe(
          step,
          60,
          [{ key: 'gpu0', label: 'GPU0', usedBytes: 60 * GIB + step * 512 * MIB, totalBytes: 80 * GIB }],
          0,
        ),
      )
    }
    const leak = findings.find((f) => f.cause === 'memory-leak')
    // 60 GiB + 0.5 GiB a step reaches 80 GiB at step 40
    expect(leak?.message).toMatch(
      /^GPU0 memory rises steadily \(50\.0 GiB per 100 steps, r²=1\.00\): out of memory around step 40/,
    )
    expect(leak?.details).toMatchObject({ unit: 'step', device: 'GPU0' })
    expect(findings.some((f) => f.cause === 'oom-imminent')).toBe(true)
    const first = findings.find((f) => f.cause === 'oom-imminent')
    expect(first).toBeDefined()
    expect((first?.details.projectedOomIn as { steps: number } | undefined)?.steps).toBeLessThanOrEqual(10)
  })
})
