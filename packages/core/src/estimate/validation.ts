import { RigfitError } from '../errors.js'
import { findCatalogModel } from '../model/catalog.js'
import { modelSpecFromHfConfig } from '../model/hf-config.js'
import { EstimateInput, type ValidationMetric, ValidationRow } from '../schemas/index.js'
import { estimate } from './estimate.js'

const UNIT_BYTES = { B: 1, MB: 1e6, MiB: 2 ** 20, GB: 1e9, GiB: 2 ** 30 } as const

/**
 * Agreed bounds on the absolute relative error (the validation test enforces them): the medians are the targets;
 * the worst-case bounds guard against regressions and sit above the known outliers (docs/estimate.md lists them:
 * the fp16 speed of the Transformers guide's V100 run is 2.4x slower than the model, which has no per-kernel
 * host overhead).
 */
export const VALIDATION_BOUNDS = {
  memoryMedian: 0.1,
  speedMedian: 0.25,
  memoryWorst: 0.3,
  speedWorst: 1.5,
} as const

export interface ValidationOutcome {
  id: string
  metric: ValidationMetric
  measured: number
  predicted: number
  /** (predicted - measured) / measured. */
  error: number
  row: ValidationRow
}

export interface MetricSummary {
  metric: ValidationMetric
  count: number
  medianAbsError: number
  worstAbsError: number
  worstId: string
}

/** Parses one dataset line, naming the file and line on failure. */
export function parseValidationRow(json: unknown, where: string): ValidationRow {
  const parsed = ValidationRow.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new RigfitError(
      'validation',
      'E_VALIDATION_ROW',
      `${where}: ${issue?.path.join('.') || '(row)'}: ${issue?.message}`,
      {
        suggestion:
          'Each line of a validation file is one JSON object in the ValidationRow format (see packages/core/validation/README.md).',
      },
    )
  }
  return parsed.data
}

/** The estimate input a row describes. */
export function validationInput(row: ValidationRow): EstimateInput {
  const model =
    'catalog' in row.model
      ? findCatalogModel(row.model.catalog)
      : modelSpecFromHfConfig(row.model.config, `validation row ${row.id}`)
  if (!model) {
    throw new RigfitError(
      'validation',
      'E_VALIDATION_ROW',
      `validation row ${row.id}: unknown catalog model "${(row.model as { catalog: string }).catalog}"`,
    )
  }
  const { vramGB, ...gpu } = row.gpu
  return EstimateInput.parse({
    ...row.settings,
    model,
    device: { ...gpu, vramBytes: Math.round(vramGB * 2 ** 30) },
  })
}

/** The row's measured value in bytes (memory) or tokens per second per device. */
export function measuredValue(row: ValidationRow): number {
  return row.unit === 'tokens/s/device' ? row.value : row.value * UNIT_BYTES[row.unit]
}

/** Compares rigfit's estimate with one measured configuration. */
export function evaluateValidationRow(row: ValidationRow): ValidationOutcome {
  const result = estimate(validationInput(row))
  let predicted: number
  switch (row.metric) {
    case 'max_memory_allocated':
      predicted = result.perDevice.peakAllocated
      break
    case 'max_memory_reserved':
      predicted = result.perDevice.reserved
      break
    case 'nvidia-smi':
      predicted = result.perDevice.total
      break
    case 'tokens_per_second':
      predicted = result.throughput?.tokensPerSecondPerDevice ?? 0
      break
  }
  const measured = measuredValue(row)
  return {
    id: row.id,
    metric: row.metric,
    measured,
    predicted,
    error: (predicted - measured) / measured,
    row,
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** Median and worst absolute relative error per metric, plus `memory` over all memory metrics together. */
export function summarizeValidation(outcomes: readonly ValidationOutcome[]): MetricSummary[] {
  const groups = new Map<ValidationMetric | 'memory', ValidationOutcome[]>()
  for (const outcome of outcomes) {
    groups.set(outcome.metric, [...(groups.get(outcome.metric) ?? []), outcome])
    if (outcome.metric !== 'tokens_per_second')
      groups.set('memory', [...(groups.get('memory') ?? []), outcome])
  }
  const order: (ValidationMetric | 'memory')[] = [
    'memory',
    'max_memory_allocated',
    'max_memory_reserved',
    'nvidia-smi',
    'tokens_per_second',
  ]
  return order.flatMap((metric) => {
    const group = groups.get(metric)
    if (!group || group.length === 0) return []
    const worst = group.reduce((a, b) => (Math.abs(b.error) > Math.abs(a.error) ? b : a))
    return [
      {
        metric: metric as ValidationMetric,
        count: group.length,
        medianAbsError: median(group.map((o) => Math.abs(o.error))),
        worstAbsError: Math.abs(worst.error),
        worstId: worst.id,
      },
    ]
  })
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`
function formatValue(metric: ValidationMetric, value: number): string {
  return metric === 'tokens_per_second'
    ? `${Math.round(value).toLocaleString('en-US')} tok/s`
    : `${(value / 2 ** 30).toFixed(2)} GiB`
}

/** Markdown: the summary per metric, then every row with measured, predicted and error. */
export function renderValidationTable(outcomes: readonly ValidationOutcome[]): string {
  const lines = [
    '| metric | rows | median abs error | worst abs error (row) |',
    '| --- | ---: | ---: | --- |',
  ]
  for (const s of summarizeValidation(outcomes)) {
    const name = (s.metric as string) === 'memory' ? 'all memory metrics' : s.metric
    lines.push(
      `| ${name} | ${s.count} | ${(s.medianAbsError * 100).toFixed(1)}% | ${(s.worstAbsError * 100).toFixed(1)}% (${s.worstId}) |`,
    )
  }
  lines.push(
    '',
    '| row | GPU | metric | measured | rigfit | error |',
    '| --- | --- | --- | ---: | ---: | ---: |',
  )
  for (const o of outcomes) {
    lines.push(
      `| ${o.id} | ${o.row.gpu.name} | ${o.metric} | ${formatValue(o.metric, o.measured)} | ${formatValue(o.metric, o.predicted)} | ${pct(o.error)} |`,
    )
  }
  return lines.join('\n')
}
