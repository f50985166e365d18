import { describe, expect, it } from 'vitest'
import { fitLine } from '../../src/detect/linear-fit.js'
import { MemoryTrend } from '../../src/detect/memory-trend.js'

const MIB = 1024 ** 2
const GIB = 1024 ** 3

describe('fitLine', () => {
  it('fits a line exactly and rates noise low', () => {
    expect(
      fitLine([
        { x: 0, y: 1 },
        { x: 1, y: 3 },
        { x: 2, y: 5 },
      ]),
    ).toEqual({ slope: 2, intercept: 1, r2: 1, n: 3 })
    const noisy = fitLine([0, 1, 2, 3, 4, 5, 6, 7].map((x) => ({ x, y: x % 2 === 0 ? 10 : -10 })))
    expect(noisy?.r2).toBeLessThan(0.1)
    expect(fitLine([{ x: 1, y: 1 }])).toBeNull()
    expect(
      fitLine([
        { x: 1, y: 1 },
        { x: 1, y: 2 },
      ]),
    ).toBeNull()
  })
})

describe('MemoryTrend', () => {
  it('calls a steady rise a leak and projects when capacity is reached', () => {
    const trend = new MemoryTrend()
    for (let step = 1; step <= 20; step += 1) trend.add(step, 8 * GIB + step * 100 * MIB)
    const verdict = trend.verdict(24 * GIB)
    expect(verdict?.leaking).toBe(true)
    expect(verdict?.slope).toBeCloseTo(100 * MIB, 0)
    // (24 GiB - (8 GiB + 2000 MiB)) / 100 MiB per step
    expect(verdict?.unitsToCapacity).toBeCloseTo((16 * 1024 - 2000) / 100, 5)
  })

  it('ignores the warm-up growth of the allocator and a flat plateau after it', () => {
    const trend = new MemoryTrend()
    const used = [2, 6, 9, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]
    for (const [i, gib] of used.entries()) trend.add(i + 1, gib * GIB)
    expect(trend.verdict(24 * GIB)?.leaking).toBe(false)
  })

  it('does not call jitter or a tiny drift a leak, and waits for enough points', () => {
    const jitter = new MemoryTrend()
    for (let step = 1; step <= 30; step += 1) jitter.add(step, 10 * GIB + (step % 3) * 40 * MIB)
    expect(jitter.verdict(24 * GIB)?.leaking).toBe(false)
    const drift = new MemoryTrend()
    for (let step = 1; step <= 30; step += 1) drift.add(step, 10 * GIB + step * 256 * 1024)
    expect(drift.verdict(24 * GIB)?.leaking).toBe(false)
    const early = new MemoryTrend()
    for (let step = 1; step <= 6; step += 1) early.add(step, step * GIB)
    expect(early.verdict(24 * GIB)).toBeNull()
  })
})
