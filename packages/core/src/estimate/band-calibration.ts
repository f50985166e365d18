import { RunKind } from '../schemas/index.js'
import type { FitBand } from './confidence.js'
import { type BandBasis, bandPath, poolsInto } from './run-kinds.js'

/** A band is never computed from fewer measured runs than this; a kind with fewer takes its parent's. */
export const MIN_BAND_ROWS = 20

/** The share of held-out rows a band is calibrated to hold: the rest split evenly above and below it. */
export const BAND_COVERAGE = 0.9

/** One held-out memory row: its kind, and the measured figure over the predicted one. */
export interface HeldOutRatio {
  kind: RunKind
  ratio: number
}

const up = (x: number) => Math.max(0, Math.ceil(x * 100 - 1e-9) / 100)

/** The value at rank ceil(p * n) of the sorted values (nearest rank), so at least p of them are at or below it. */
function nearestRank(sorted: readonly number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))
  return sorted[index] as number
}

/**
 * The band holding the middle BAND_COVERAGE of these ratios: the measured excess at the upper quantile and the
 * shortfall at the lower one, rounded outward to whole percents; a quantile, not the extremes, so one outlying run
 * does not widen every verdict of its kind.
 */
export function bandOf(ratios: readonly number[], basis: BandBasis): FitBand {
  if (ratios.length === 0) return { under: 0, over: 0, rows: 0, basis, coverage: 0 }
  const sorted = [...ratios].sort((a, b) => a - b)
  const tail = (1 - BAND_COVERAGE) / 2
  const under = up(nearestRank(sorted, 1 - tail) - 1)
  const over = up(1 - nearestRank(sorted, tail))
  return { under, over, rows: sorted.length, basis, coverage: coverageOf(sorted, under, over) }
}

/** Whether a measured-over-predicted ratio lies inside a band. */
export const insideBand = (ratio: number, band: Pick<FitBand, 'under' | 'over'>): boolean =>
  ratio <= 1 + band.under + 1e-9 && ratio >= 1 - band.over - 1e-9

/** Share of the ratios inside the band, to a tenth of a percent. */
function coverageOf(ratios: readonly number[], under: number, over: number): number {
  const inside = ratios.filter((r) => insideBand(r, { under, over })).length
  return Math.round((inside / ratios.length) * 1000) / 1000
}

/**
 * The band of every kind of run: from its own rows when it has MIN_BAND_ROWS of them, else from the first kind up
 * its path (`run-kinds.ts`) whose pooled rows reach that many, else from every row.
 */
export function calibrateBands(
  heldOut: readonly HeldOutRatio[],
  oomFloors: readonly HeldOutRatio[] = [],
): Record<RunKind, FitBand> {
  const ratiosOf = (basis: BandBasis) =>
    heldOut.filter((o) => basis === 'all' || poolsInto(o.kind, basis)).map((o) => o.ratio)
  return Object.fromEntries(
    RunKind.options.map((kind) => {
      const path = bandPath(kind)
      const basis = path.find((at) => ratiosOf(at).length >= MIN_BAND_ROWS) ?? 'all'
      const band = bandOf(ratiosOf(basis), basis)
      if (basis === kind) return [kind, band]
      // A pooled kind's upper edge still keeps out its own measured out-of-memory runs: the parent's spread says
      // how far a typical run strays, but the upper edge is what stands between a `fits` verdict and such a run,
      // so it reaches at least the memory each of them had over what it was predicted to need.
      const own = oomFloors.filter((o) => o.kind === kind).map((o) => o.ratio)
      const under = Math.max(band.under, ...own.map((ratio) => up(ratio - 1)))
      return [kind, { ...band, under, coverage: coverageOf(ratiosOf(basis), under, band.over) }]
    }),
  ) as Record<RunKind, FitBand>
}
