import { RigfitError } from '../errors.js'
import { findCatalogModel } from '../model/catalog.js'
import { modelSpecFromHfConfig } from '../model/hf-config.js'
import {
  EstimateDevice,
  type EstimateInput,
  type FitVerdict,
  type RunKind,
  type ValidationMetric,
  ValidationRow,
} from '../schemas/index.js'
import { resolveStack } from '../stack/resolve-stack.js'
import { userEstimateInput } from '../stack/stack-estimate-input.js'
import { parseStackRef } from '../stack/stack-ref.js'
import { FIT_BANDS, type FitBand, fitVerdict, runKind } from './confidence.js'
import { type EstimateTuning, estimate, SHIPPED_TUNING } from './estimate.js'

const UNIT_BYTES = { B: 1, MB: 1e6, MiB: 2 ** 20, GB: 1e9, GiB: 2 ** 30 } as const

export interface ValidationOutcome {
  id: string
  metric: ValidationMetric
  /** The row's source id, the unit of leave-one-source-out. */
  source: string
  kind: RunKind
  /** The published figure; for `oom` and `fits` rows, the device memory the run had. */
  measured: number
  /**
   * rigfit's figure for the metric; for `oom` and `fits` rows, what the run needs: the predicted nvidia-smi total
   * less the releasable cache.
   */
  predicted: number
  /** (predicted - measured) / measured. */
  error: number
  /** The fit verdict against the measured memory (`oom` and `fits` rows), else null. */
  verdict: FitVerdict | null
  row: ValidationRow
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

const inputs = new WeakMap<ValidationRow, EstimateInput>()

/**
 * The estimate input a row describes: exactly what `rigfit estimate --stack <row.stack>` builds from the row's
 * settings on its GPU (`userEstimateInput`), with nothing a user could not type.
 */
export function validationInput(row: ValidationRow): EstimateInput {
  const cached = inputs.get(row)
  if (cached) return cached
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
  const stack = resolveStack(parseStackRef(row.stack, `validation row ${row.id}: stack`, 'validation'))
  const input = userEstimateInput({
    model,
    device: EstimateDevice.parse({ ...gpu, vramBytes: Math.round(vramGB * 2 ** 30) }),
    settings: row.settings,
    stack: stack.mechanisms,
  })
  inputs.set(row, input)
  return input
}

/** The row's measured value in bytes (memory, or the memory an `oom`/`fits` run had) or tokens/s per device. */
export function measuredValue(row: ValidationRow): number {
  return row.unit === 'tokens/s/device' ? row.value : row.value * UNIT_BYTES[row.unit]
}

export const isMemoryMetric = (metric: ValidationMetric): boolean =>
  metric === 'max_memory_allocated' || metric === 'max_memory_reserved' || metric === 'nvidia-smi'

export const isOutcomeMetric = (metric: ValidationMetric): boolean => metric === 'oom' || metric === 'fits'

/** Compares rigfit's estimate with one measured configuration, with the given global constants and bands. */
export function evaluateValidationRow(
  row: ValidationRow,
  tuning: EstimateTuning = SHIPPED_TUNING,
  bands: Record<RunKind, FitBand> = FIT_BANDS,
): ValidationOutcome {
  const input = validationInput(row)
  const result = estimate(input, tuning)
  const measured = measuredValue(row)
  const kind = runKind(input)
  let predicted: number
  let verdict: FitVerdict | null = null
  switch (row.metric) {
    case 'max_memory_allocated':
      predicted = result.perDevice.peakAllocated
      break
    case 'max_memory_reserved':
      predicted = result.perDevice.reserved
      break
    case 'tokens_per_second':
      predicted = result.throughput?.tokensPerSecondPerDevice ?? 0
      break
    case 'nvidia-smi':
      predicted = result.perDevice.total
      break
    case 'oom':
    case 'fits':
      // What the run needs: the cache the allocator releases when the device is full does not count.
      predicted = result.perDevice.total - result.perDevice.releasable
      verdict = fitVerdict(predicted, measured, kind, bands).verdict
      break
  }
  return {
    id: row.id,
    metric: row.metric,
    source: row.source.id,
    kind,
    measured,
    predicted,
    error: (predicted - measured) / measured,
    verdict,
    row,
  }
}
