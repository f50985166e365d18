import { describe, expect, it } from 'vitest'
import * as calibration from '../../src/estimate/band-calibration.js'
import { type FitBand, fitVerdict, runKind } from '../../src/estimate/confidence.js'
import { bandPath, PARENT_KIND, poolsInto } from '../../src/estimate/run-kinds.js'
import type { RunKind } from '../../src/schemas/index.js'

const KINDS: RunKind[] = ['full', 'lora', 'qlora', 'full-multi-gpu', 'lora-multi-gpu', 'qlora-multi-gpu']
const band = (under: number, over: number, rows = 40): FitBand => ({
  under,
  over,
  rows,
  basis: 'full',
  coverage: 0.9,
})
const bands = (b: FitBand) =>
  Object.fromEntries(KINDS.map((k) => [k, { ...b, basis: k }])) as Record<RunKind, FitBand>

/** n ratios spread evenly from `from` to `to`. */
const spread = (kind: RunKind, n: number, from: number, to: number): calibration.HeldOutRatio[] =>
  Array.from({ length: n }, (_, i) => ({ kind, ratio: from + ((to - from) * i) / Math.max(1, n - 1) }))

describe('run kinds and fit verdicts', () => {
  it('names the kind from the method and the GPU count', () => {
    const lora = { rank: 8, targets: ['q' as const], dropout: 0 }
    expect(runKind({ lora: null, quant: 'none', gpus: 1, nodes: 1 })).toBe('full')
    expect(runKind({ lora, quant: 'none', gpus: 1, nodes: 1 })).toBe('lora')
    expect(runKind({ lora, quant: 'nf4', gpus: 1, nodes: 1 })).toBe('qlora')
    expect(runKind({ lora, quant: 'int8', gpus: 1, nodes: 2 })).toBe('qlora-multi-gpu')
    expect(runKind({ lora: null, quant: 'none', gpus: 8, nodes: 1 })).toBe('full-multi-gpu')
  })

  it('pools each kind into its method, and every method into all runs', () => {
    expect(bandPath('lora-multi-gpu')).toEqual(['lora-multi-gpu', 'lora', 'all'])
    expect(bandPath('qlora')).toEqual(['qlora', 'all'])
    for (const kind of KINDS) {
      expect(bandPath(kind).at(-1)).toBe('all')
      expect(poolsInto(kind, 'all')).toBe(true)
      expect(poolsInto(kind, kind)).toBe(true)
    }
    expect(poolsInto('lora', 'lora-multi-gpu')).toBe(false)
    expect(PARENT_KIND.all).toBeNull()
  })

  it('is borderline wherever the band straddles the capacity', () => {
    const b = bands(band(0.2, 0.1, 24))
    for (const total of [50, 80, 83.3, 90, 100, 111, 120]) {
      const { verdict, confidence } = fitVerdict(total * 1e9, 100e9, 'full', b)
      const expected = total * 1.2 <= 100 ? 'fits' : total * 0.9 > 100 ? 'does-not-fit' : 'borderline'
      expect(verdict, String(total)).toBe(expected)
      expect(confidence).toMatchObject({ kind: 'full', under: 0.2, over: 0.1, rows: 24, pooled: false })
    }
  })
})

describe('band calibration', () => {
  it('holds the middle 90% of the ratios, so one outlier does not widen the band', () => {
    for (const n of [20, 37, 100, 251]) {
      const ratios = spread('full', n, 0.8, 1.3).map((r) => r.ratio)
      const b = calibration.bandOf([...ratios, 3], 'full')
      // The outlier at 3x lies outside; the band is the quantiles, not the extremes.
      expect(b.under, String(n)).toBeLessThan(0.4)
      expect(b.rows).toBe(n + 1)
      const inside = [...ratios, 3].filter((r) => r <= 1 + b.under + 1e-9 && r >= 1 - b.over - 1e-9).length
      expect(inside / (n + 1)).toBeGreaterThanOrEqual(calibration.BAND_COVERAGE)
      expect(inside / (n + 1)).toBeLessThanOrEqual(calibration.BAND_COVERAGE + 0.08)
      expect(b.coverage).toBeCloseTo(inside / (n + 1), 3)
    }
  })

  it('never computes a band from fewer than 20 rows: a smaller kind takes its parent, then all runs', () => {
    for (const own of [0, 1, 2, calibration.MIN_BAND_ROWS - 1, calibration.MIN_BAND_ROWS]) {
      const heldOut = [
        ...spread('full', 30, 0.9, 1.1),
        ...spread('lora', 5, 0.95, 1.05),
        ...spread('lora-multi-gpu', own, 0.98, 1.02),
      ]
      const b = calibration.calibrateBands(heldOut)
      for (const kind of KINDS)
        expect(b[kind].rows, `${own} ${kind}`).toBeGreaterThanOrEqual(calibration.MIN_BAND_ROWS)
      expect(b['full-multi-gpu'].basis).toBe('full')
      expect(b.qlora.basis).toBe('all')
      expect(b['lora-multi-gpu'].basis).toBe(
        own >= calibration.MIN_BAND_ROWS ? 'lora-multi-gpu' : own + 5 >= 20 ? 'lora' : 'all',
      )
      const verdict = fitVerdict(10e9, 100e9, 'lora-multi-gpu', b).confidence
      expect(verdict.pooled).toBe(own < calibration.MIN_BAND_ROWS)
      expect(verdict.rows).toBe(b['lora-multi-gpu'].rows)
    }
  })

  it("reaches a pooled kind's own measured out-of-memory runs, so they are not called fits, and no further", () => {
    const heldOut = [...spread('full', 40, 0.9, 1.1), { kind: 'full-multi-gpu' as const, ratio: 2.5 }]
    // An out-of-memory run predicted at 1/1.6 of the device it had: it needed at least 1.6x its prediction.
    const oom = [{ kind: 'full-multi-gpu' as const, ratio: 1.6 }]
    const b = calibration.calibrateBands(heldOut, oom)
    expect(b.full.under).toBeLessThan(0.2)
    // One outlying run that ran (2.5x) does not widen the pooled band: the quantile of the parent holds it.
    expect(calibration.calibrateBands(heldOut)['full-multi-gpu'].under).toBe(b.full.under)
    expect(b['full-multi-gpu'].under).toBeCloseTo(0.6, 5)
    expect(b['full-multi-gpu'].basis).toBe('full')
    // A run predicted at 70% of the device that needs 1.6x its prediction is not called fits.
    expect(fitVerdict(70e9, 100e9, 'full-multi-gpu', b).verdict).toBe('borderline')
    expect(fitVerdict(70e9, 100e9, 'full', b).verdict).toBe('fits')
  })
})
