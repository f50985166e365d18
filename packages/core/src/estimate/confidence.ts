import type { EstimateInput, FitConfidence, FitVerdict, RunKind } from '../schemas/index.js'

export interface FitBand {
  /** Largest measured excess over the prediction, as a share of the prediction. */
  under: number
  /** Largest measured shortfall below the prediction, as a share of the prediction. */
  over: number
  /** Validation rows the band comes from. */
  rows: number
}

/**
 * Leave-one-source-out error bands of the memory rows of the validation dataset, per kind of run: each source's rows
 * predicted with the global constants fitted without that source, so a band is what a user meets on a stack rigfit
 * was not fitted to. `validation.test.ts` recomputes them from the dataset and fails when they are not current.
 */
export const FIT_BANDS: Record<RunKind, FitBand> = {
  full: { under: 0.29, over: 0.29, rows: 124 },
  lora: { under: 0.31, over: 0.21, rows: 65 },
  qlora: { under: 0.51, over: 0.06, rows: 48 },
  'full-multi-gpu': { under: 1.49, over: 0, rows: 2 },
  'lora-multi-gpu': { under: 0.27, over: 0.04, rows: 12 },
  'qlora-multi-gpu': { under: 0.07, over: 0, rows: 1 },
}

/**
 * The band for a kind with no measured runs: its method's one-GPU band when that is measured (a multi-GPU run
 * keeps the same terms, sharded), else the widest of the measured kinds.
 */
export function fallbackBand(bands: Record<RunKind, FitBand>, kind?: RunKind): FitBand {
  const single = kind?.replace('-multi-gpu', '') as RunKind | undefined
  const own = single ? bands[single] : undefined
  if (own && own.rows > 0) return { ...own, rows: 0 }
  const measured = Object.values(bands).filter((band) => band.rows > 0)
  if (measured.length === 0) return { under: 0.2, over: 0.1, rows: 0 }
  return {
    under: Math.max(...measured.map((band) => band.under)),
    over: Math.max(...measured.map((band) => band.over)),
    rows: 0,
  }
}

/** Full training, LoRA or a quantised base (QLoRA), on one GPU or on several. */
export function runKind(input: Pick<EstimateInput, 'lora' | 'quant' | 'gpus' | 'nodes'>): RunKind {
  const multi = input.gpus * input.nodes > 1
  if (input.lora === null) return multi ? 'full-multi-gpu' : 'full'
  if (input.quant === 'none') return multi ? 'lora-multi-gpu' : 'lora'
  return multi ? 'qlora-multi-gpu' : 'qlora'
}

/**
 * The fit verdict for a predicted nvidia-smi total: `fits` only when the largest under-prediction measured for
 * this kind of run still fits, `does-not-fit` when even the largest over-prediction does not.
 */
export function fitVerdict(
  total: number,
  capacity: number,
  kind: RunKind,
  bands: Record<RunKind, FitBand> = FIT_BANDS,
): { verdict: FitVerdict; confidence: FitConfidence } {
  const measured = bands[kind]
  const band = measured.rows > 0 ? measured : fallbackBand(bands, kind)
  const high = Math.round(total * (1 + band.under))
  const low = Math.round(total * (1 - band.over))
  const verdict: FitVerdict = high <= capacity ? 'fits' : low > capacity ? 'does-not-fit' : 'borderline'
  return {
    verdict,
    confidence: { kind, under: band.under, over: band.over, rows: band.rows, low, high },
  }
}
