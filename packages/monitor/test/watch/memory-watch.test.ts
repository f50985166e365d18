import { describe, expect, it } from 'vitest'
import type { Sample } from '../../src/sampling/sampler.js'
import { MemoryWatch, memorySeries } from '../../src/watch/memory-watch.js'

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
  it("takes the GPUs in use, or the trainer's own resident memory when the run uses none", () => {
    expect(
      memorySeries(sample([reading(0, GIB), reading(1, GIB)]), [1], () => null).map((s) => s.key),
    ).toEqual(['gpu1'])
    expect(memorySeries(sample([reading(0, GIB)]), null, () => 3 * GIB).map((s) => s.key)).toEqual(['gpu0'])
    // 3 GiB of the trainer's own, and the 44 GiB the machine has available: it can reach 47 GiB.
    expect(memorySeries(sample([reading(0, GIB)]), [], () => 3 * GIB)).toEqual([
      { key: 'host', label: 'trainer processes (host RAM)', usedBytes: 3 * GIB, totalBytes: 47 * GIB },
    ])
    // Machine-wide RAM is never fitted: without the trainer's own figure there is no host series.
    expect(memorySeries(sample([reading(0, GIB)]), [], () => null)).toEqual([])
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

  it('against time, says nothing in the first two minutes nor before two minutes of evidence', () => {
    const watch = new MemoryWatch('second')
    // 4.2 GiB a minute from the first second: a steep, perfectly straight rise.
    const at = (second: number) => [
      {
        key: 'host',
        label: 'trainer processes (host RAM)',
        usedBytes: GIB + second * 70 * MIB,
        totalBytes: 64 * GIB,
      },
    ]
    const firstFindingAt = (() => {
      for (let second = 0; second <= 600; second += 1)
        if (watch.observe(second, 1, at(second), 0).length > 0) return second
      return null
    })()
    // Warm-up until 120 s, then at least 120 s of points (one per 5 s) before a verdict.
    expect(firstFindingAt).toBe(240)
  })

  it('against steps, needs its warm-up steps and seven steps of evidence', () => {
    for (const stride of [1, 10, 50]) {
      const watch = new MemoryWatch('step')
      let first: number | null = null
      for (let i = 1; i <= 30 && first === null; i += 1) {
        const step = i * stride
        const found = watch.observe(
          step,
          1,
          [{ key: 'gpu0', label: 'GPU0', usedBytes: 10 * GIB + step * 64 * MIB, totalBytes: 80 * GIB }],
          0,
        )
        if (found.length > 0) first = i
      }
      // Three warm-up points, then eight points: the eleventh report of a step, whatever the stride.
      expect(first).toBe(11)
    }
  })
})
