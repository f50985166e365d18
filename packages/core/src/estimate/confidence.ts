import type { EstimateInput, FitConfidence, FitVerdict, RunKind } from '../schemas/index.js'
import type { BandBasis } from './run-kinds.js'

export interface FitBand {
  /** Measured excess over the prediction at the band's upper quantile, as a share of the prediction. */
  under: number
  /** Measured shortfall below the prediction at the band's lower quantile, as a share of the prediction. */
  over: number
  /** Validation rows the band comes from: those of `basis` and of every kind pooled under it. */
  rows: number
  /** The kind whose rows the band comes from: the run's own, or the parent it pools into when it has too few. */
  basis: BandBasis
  /** Share of those held-out rows whose measurement lies inside the band. */
  coverage: number
}

/**
 * Leave-one-source-out error bands of the memory rows of the validation dataset, per kind of run: each source's rows
 * predicted with the global constants fitted without that source, so a band is what a user meets on a stack rigfit
 * was not fitted to. A kind with fewer than MIN_BAND_ROWS rows takes its parent's band (`run-kinds.ts`), and each
 * band holds the middle BAND_COVERAGE of its rows (`band-calibration.ts`). `validation.test.ts` recomputes them
 * from the dataset and fails when they are not current.
 */
export const FIT_BANDS: Record<RunKind, FitBand> = {
  full: { under: 0.27, over: 0.09, rows: 142, basis: 'full', coverage: 0.915 },
  lora: { under: 0.23, over: 0.15, rows: 91, basis: 'lora', coverage: 0.923 },
  qlora: { under: 0.33, over: 0, rows: 49, basis: 'qlora', coverage: 0.918 },
  'full-multi-gpu': { under: 0.4, over: 0.09, rows: 142, basis: 'full', coverage: 0.944 },
  'lora-multi-gpu': { under: 0.23, over: 0.15, rows: 91, basis: 'lora', coverage: 0.923 },
  'qlora-multi-gpu': { under: 0.33, over: 0, rows: 49, basis: 'qlora', coverage: 0.918 },
}

/** Full training, LoRA or a quantised base (QLoRA), on one GPU or on several. */
export function runKind(input: Pick<EstimateInput, 'lora' | 'quant' | 'gpus' | 'nodes'>): RunKind {
  const multi = input.gpus * input.nodes > 1
  if (input.lora === null) return multi ? 'full-multi-gpu' : 'full'
  if (input.quant === 'none') return multi ? 'lora-multi-gpu' : 'lora'
  return multi ? 'qlora-multi-gpu' : 'qlora'
}

/**
 * The fit verdict for a predicted nvidia-smi total: `fits` only when the upper end of the kind's band still fits,
 * `does-not-fit` when even its lower end does not, `borderline` in between.
 */
export function fitVerdict(
  total: number,
  capacity: number,
  kind: RunKind,
  bands: Record<RunKind, FitBand> = FIT_BANDS,
): { verdict: FitVerdict; confidence: FitConfidence } {
  const band = bands[kind]
  const high = Math.round(total * (1 + band.under))
  const low = Math.round(total * (1 - band.over))
  const verdict: FitVerdict = high <= capacity ? 'fits' : low > capacity ? 'does-not-fit' : 'borderline'
  return {
    verdict,
    confidence: {
      kind,
      under: band.under,
      over: band.over,
      rows: band.rows,
      basis: band.basis,
      pooled: band.basis !== kind,
      coverage: band.coverage,
      low,
      high,
    },
  }
}
