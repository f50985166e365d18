import type { RunKind, ValidationRow } from '../schemas/index.js'
import { calibrateBands } from './band-calibration.js'
import { FIT_BANDS, type FitBand } from './confidence.js'
import { isHopper } from './device-efficiency.js'
import { type EstimateTuning, estimate, SHIPPED_TUNING } from './estimate.js'
import {
  evaluateValidationRow,
  isMemoryMetric,
  type ValidationOutcome,
  validationInput,
} from './validation.js'
import { median } from './validation-summary.js'

const steps = (from: number, to: number, step: number) =>
  Array.from(
    { length: Math.round((to - from) / step) + 1 },
    (_, i) => Math.round((from + i * step) * 1000) / 1000,
  )

/** The values each fitted constant is searched over. */
export const TUNING_GRID = {
  matmulEfficiency: steps(0.3, 0.95, 0.01),
  allocatorFragmentation: steps(0, 1, 0.01),
  /**
   * Searched jointly with the matmul efficiency: both move only tokens/s. At most 0.9: FlashAttention-2 reaches
   * 50-73% of peak where GEMMs reach 80-90%, so attention never runs at the GEMMs' rate.
   */
  attentionEfficiency: steps(0.3, 0.9, 0.1),
  /** Microseconds; fitted only to the launch-bound tokens/s rows (`fitSpeed`). */
  kernelOverheadMicroseconds: steps(0, 30, 1),
  /** Fitted only to the Hopper tokens/s rows (`fitSpeed`). */
  hopperSustainedShare: steps(0.5, 1, 0.02),
} as const

/**
 * What a constant is when no training row constrains it (a fold that holds out the only source measuring it):
 * cuBLAS GEMMs of transformer sizes at 75% of peak (NVIDIA's Deep Learning Performance guide, 70-80%), attention at
 * 70% of that (FlashAttention-2's 50-73% of peak against GEMMs' 80-90%), 10 µs per kernel launch (the middle of the
 * 5-25 µs of host work per eager PyTorch op), and an allocator that reserves only what it allocates. Falling back
 * to the shipped value instead would leak the held-out source into its own prediction.
 */
export const PRIOR_TUNING: EstimateTuning = {
  matmulEfficiency: 0.75,
  attentionEfficiency: 0.7,
  allocatorFragmentation: 0,
  kernelOverheadSeconds: 10e-6,
  hopperSustainedShare: 1,
}

/** Median absolute error, ties broken by the mean, so the search prefers the value that is better overall. */
function loss(rows: readonly ValidationRow[], tuning: EstimateTuning): number {
  if (rows.length === 0) return 0
  const errors = rows.map((row) => Math.abs(evaluateValidationRow(row, tuning).error))
  return median(errors) + 1e-3 * (errors.reduce((a, b) => a + b, 0) / errors.length)
}

function best<T>(
  rows: readonly ValidationRow[],
  values: readonly T[],
  tuningFor: (value: T) => EstimateTuning,
  fallback: T,
): T {
  if (rows.length === 0) return fallback
  let bestValue = fallback
  let bestLoss = Number.POSITIVE_INFINITY
  for (const value of values) {
    const l = loss(rows, tuningFor(value))
    if (l < bestLoss - 1e-12) {
      bestLoss = l
      bestValue = value
    }
  }
  return bestValue
}

/** Every pair of the matmul and attention efficiencies, fitted jointly: both set the rate of the matrix work. */
const EFFICIENCY_GRID = TUNING_GRID.attentionEfficiency.flatMap((attentionEfficiency) =>
  TUNING_GRID.matmulEfficiency.map((matmulEfficiency) => ({ matmulEfficiency, attentionEfficiency })),
)

/**
 * A tokens/s row constrains the kernel launch cost when launches are at least this share of its step (at the
 * prior constants). Large-batch rows spend 1-4% of their step launching: fitted to them, the launch cost drifts to
 * whatever shaves a hundredth of a percent off their error, and then mispredicts the small models it matters for.
 */
const LAUNCH_BOUND_SHARE = 0.1

/** Fewer launch-bound rows than this leave the launch cost at its prior. */
const MIN_LAUNCH_BOUND_ROWS = 5

/** Whether launching kernels is at least `LAUNCH_BOUND_SHARE` of a row's predicted step, at the prior constants. */
export function isLaunchBound(row: ValidationRow): boolean {
  const input = validationInput(row)
  const step = estimate(input, PRIOR_TUNING).throughput?.stepSeconds ?? 0
  const launchFree =
    estimate(input, { ...PRIOR_TUNING, kernelOverheadSeconds: 0 }).throughput?.stepSeconds ?? 0
  return step > 0 && (step - launchFree) / step >= LAUNCH_BOUND_SHARE
}

/**
 * The step time's constants: the matmul and attention efficiencies jointly to every tokens/s row, and the kernel
 * launch cost to the launch-bound rows alone, with the efficiencies fitted first at the prior launch cost and then
 * again at the fitted one.
 */
function fitSpeed(speedRows: readonly ValidationRow[]) {
  const efficiencies = (kernelOverheadSeconds: number, hopperSustainedShare: number) =>
    best(
      speedRows,
      EFFICIENCY_GRID,
      (value) => ({ ...SHIPPED_TUNING, ...value, kernelOverheadSeconds, hopperSustainedShare }),
      {
        matmulEfficiency: PRIOR_TUNING.matmulEfficiency,
        attentionEfficiency: PRIOR_TUNING.attentionEfficiency,
      },
    )
  const launchBound = speedRows.filter(isLaunchBound)
  let kernelOverheadSeconds = PRIOR_TUNING.kernelOverheadSeconds
  let hopperSustainedShare = PRIOR_TUNING.hopperSustainedShare
  const first = efficiencies(kernelOverheadSeconds, hopperSustainedShare)
  if (launchBound.length >= MIN_LAUNCH_BOUND_ROWS) {
    kernelOverheadSeconds = best(
      launchBound,
      TUNING_GRID.kernelOverheadMicroseconds.map((us) => us / 1e6),
      (seconds) => ({ ...SHIPPED_TUNING, ...first, kernelOverheadSeconds: seconds, hopperSustainedShare }),
      kernelOverheadSeconds,
    )
  }
  // Hopper's sustained share is fitted to the Hopper rows alone, once there are enough of them.
  const hopper = speedRows.filter((row) => isHopper(validationInput(row).device ?? NO_DEVICE))
  if (hopper.length >= MIN_LAUNCH_BOUND_ROWS) {
    const second = efficiencies(kernelOverheadSeconds, hopperSustainedShare)
    hopperSustainedShare = best(
      hopper,
      TUNING_GRID.hopperSustainedShare,
      (share) => ({ ...SHIPPED_TUNING, ...second, kernelOverheadSeconds, hopperSustainedShare: share }),
      hopperSustainedShare,
    )
  }
  return {
    ...efficiencies(kernelOverheadSeconds, hopperSustainedShare),
    kernelOverheadSeconds,
    hopperSustainedShare,
  }
}

const NO_DEVICE = { kind: 'cpu', computeCapability: null } as const

/**
 * Device kinds whose tokens/s rows are scored but fit none of the step time's constants. The constants describe
 * NVIDIA's kernels: cuBLAS GEMMs and attention kernels against a tensor-core peak, CUDA launches, Hopper's clocks.
 * A CPU row measures oneDNN's GEMMs on vector units and PyTorch's CPU element-wise kernels; a ROCm row measures
 * hipBLASLt's GEMMs and AOTriton's attention against an Instinct's quoted matrix peak, which its published rows reach
 * a far smaller share of (`torch-mojo-backend.jsonl`: GPT-2 124M on an MI300X at 60% of the speed the CUDA fit
 * predicts). Fitted to, such a row drags the CUDA constants toward its own device and moves every NVIDIA prediction;
 * each of these kinds has rows from one source only, so a constant of its own could not be checked held out.
 */
const SCORED_NOT_FITTED: ReadonlySet<ValidationRow['gpu']['kind']> = new Set(['cpu', 'rocm'])

/** Whether a tokens/s row constrains the step time's fitted constants (`SCORED_NOT_FITTED` above). */
export function fitsSpeedConstants(row: ValidationRow): boolean {
  return row.metric === 'tokens_per_second' && !SCORED_NOT_FITTED.has(row.gpu.kind)
}

/**
 * The global constants fitted to rows: the step time's to the GPU tokens/s rows (`fitSpeed`), the allocator's
 * fragmentation to the rows that see the allocator's reservation (nvidia-smi and max_memory_reserved). Speed and
 * memory constants move only their own metrics, so they are fitted apart.
 */
export function fitTuning(rows: readonly ValidationRow[]): EstimateTuning {
  const speedRows = rows.filter(fitsSpeedConstants)
  const reservedRows = rows.filter((r) => r.metric === 'nvidia-smi' || r.metric === 'max_memory_reserved')
  const allocatorFragmentation = best(
    reservedRows,
    TUNING_GRID.allocatorFragmentation,
    (value) => ({ ...SHIPPED_TUNING, allocatorFragmentation: value }),
    PRIOR_TUNING.allocatorFragmentation,
  )
  return { ...fitSpeed(speedRows), allocatorFragmentation }
}

export interface HeldOutFold {
  source: string
  /** The constants fitted without this source. */
  tuning: EstimateTuning
  outcomes: ValidationOutcome[]
}

/**
 * Leave-one-source-out: for each source, fit the global constants on every other source and predict its rows
 * with them. The errors are what a user meets on a stack and a publisher rigfit was not fitted to.
 */
export function leaveOneSourceOut(
  rows: readonly ValidationRow[],
  bands: Record<RunKind, FitBand> = FIT_BANDS,
): HeldOutFold[] {
  const sources = [...new Set(rows.map((r) => r.source.id))].sort()
  return sources.map((source) => {
    const tuning = fitTuning(rows.filter((r) => r.source.id !== source))
    const outcomes = rows
      .filter((r) => r.source.id === source)
      .map((row) => evaluateValidationRow(row, tuning, bands))
    return { source, tuning, outcomes }
  })
}

/**
 * Error bands per kind of run from held-out memory outcomes (`band-calibration.ts`): each the middle 90% of the
 * measured-over-predicted ratios of its kind, or of the kind it pools into when it has fewer than 20 rows.
 */
export function bandsFromOutcomes(outcomes: readonly ValidationOutcome[]): Record<RunKind, FitBand> {
  return calibrateBands(
    outcomes
      .filter((o) => isMemoryMetric(o.metric))
      .map((o) => ({ kind: o.kind, ratio: o.measured / o.predicted })),
    // An out-of-memory run needed more than the device it had: that over the prediction is a floor on its ratio.
    outcomes
      .filter((o) => o.metric === 'oom')
      .map((o) => ({ kind: o.kind, ratio: o.measured / o.predicted })),
  )
}
