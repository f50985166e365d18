import type { ValidationMetric } from '../schemas/index.js'
import { isMemoryMetric, isOutcomeMetric, type ValidationOutcome } from './validation.js'

/** `memory` pools every memory metric. */
export type SummaryGroup = ValidationMetric | 'memory'

export interface MetricSummary {
  metric: SummaryGroup
  count: number
  medianAbsError: number
  /** Share of rows within 15% of the measurement. */
  within15: number
  worstAbsError: number
  worstId: string
}

export interface OutcomeSummary {
  /** Runs measured out of memory, and those of them rigfit calls `fits` (the guarantee is that none are). */
  oom: number
  oomPredictedFits: string[]
  /** Runs measured to fit, and those of them rigfit calls `does-not-fit`. */
  fits: number
  fitsPredictedNotFit: string[]
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

const ORDER: SummaryGroup[] = [
  'memory',
  'max_memory_allocated',
  'max_memory_reserved',
  'nvidia-smi',
  'tokens_per_second',
]

/** Median, share within 15% and worst absolute relative error per metric, plus all memory metrics together. */
export function summarizeValidation(outcomes: readonly ValidationOutcome[]): MetricSummary[] {
  const groups = new Map<SummaryGroup, ValidationOutcome[]>()
  for (const outcome of outcomes) {
    if (isOutcomeMetric(outcome.metric)) continue
    groups.set(outcome.metric, [...(groups.get(outcome.metric) ?? []), outcome])
    if (isMemoryMetric(outcome.metric)) groups.set('memory', [...(groups.get('memory') ?? []), outcome])
  }
  return ORDER.flatMap((metric) => {
    const group = groups.get(metric)
    if (!group || group.length === 0) return []
    const worst = group.reduce((a, b) => (Math.abs(b.error) > Math.abs(a.error) ? b : a))
    const abs = group.map((o) => Math.abs(o.error))
    return [
      {
        metric,
        count: group.length,
        medianAbsError: median(abs),
        within15: abs.filter((e) => e <= 0.15).length / abs.length,
        worstAbsError: Math.abs(worst.error),
        worstId: worst.id,
      },
    ]
  })
}

/** How the fit verdicts compare with runs measured to run out of memory or to fit. */
export function summarizeOutcomes(outcomes: readonly ValidationOutcome[]): OutcomeSummary {
  const oom = outcomes.filter((o) => o.metric === 'oom')
  const fits = outcomes.filter((o) => o.metric === 'fits')
  return {
    oom: oom.length,
    oomPredictedFits: oom.filter((o) => o.verdict === 'fits').map((o) => o.id),
    fits: fits.length,
    fitsPredictedNotFit: fits.filter((o) => o.verdict === 'does-not-fit').map((o) => o.id),
  }
}

/** The summary of one group, or undefined when the outcomes have none of it. */
export function summaryOf(outcomes: readonly ValidationOutcome[], metric: SummaryGroup) {
  return summarizeValidation(outcomes).find((s) => s.metric === metric)
}
