import {
  describeJsonError,
  type EstimateInput,
  EstimateResult,
  estimate,
  modelOriginRows,
  RigfitError,
} from '@rigfit/core'
import { DEFAULT_INPUT_TIMEOUT_MS, MAX_INPUT_DOCUMENT_BYTES, readInputText } from '@rigfit/core/node'
import type { EstimateReport, SweepPoint } from '@rigfit/report'
import { type WrittenReport, writeReport } from './report-write.js'

/** The largest value a sweep tries when nothing runs out of memory (no device, or a huge one). */
const SWEEP_LIMIT = 4096

/**
 * Memory as one setting grows: powers of two and the estimated value, from 1 (micro-batch) or 128 (sequence) up
 * to the first value that does not fit the device, or `limit`. Each point is core's estimate with that one change.
 */
function sweep(input: EstimateInput, key: 'microBatch' | 'seq', from: number, limit: number): SweepPoint[] {
  const values = new Set<number>([input[key]])
  for (let value = from; value <= limit; value *= 2) values.add(value)
  const points: SweepPoint[] = []
  for (const value of [...values].sort((a, b) => a - b)) {
    if (value > limit) break
    const result = estimate({ ...input, [key]: value })
    // Out of memory is the total past the device's memory, whatever margin the verdict asks for.
    const fits = result.capacity === null ? null : result.perDevice.total <= result.capacity
    points.push({ value, totalBytes: result.perDevice.total, fits })
    if (fits === false) break
  }
  return points
}

/** The settings of an estimate as the page lists them. */
function settingsRows(input: EstimateInput): [string, string][] {
  const rows: [string, string][] = [
    ['Model', `${input.model.name} (${input.model.id})`],
    ...modelOriginRows(input.model),
    ['Sequence', `${input.seq} tokens`],
    ['Micro-batch × accumulation', `${input.microBatch} × ${input.gradAccum}`],
    ['Precision', input.precision],
    ['Optimizer', `${input.optimizer} (${input.optimizerImpl})`],
    ['Attention', input.attention],
    ['Gradient checkpointing', input.gradCheckpointing ? 'on' : 'off'],
    ['GPUs × nodes', `${input.gpus} × ${input.nodes}`],
    ['Sharding, offload', `${input.sharding}, ${input.offload}`],
  ]
  if (input.lora)
    rows.push(['LoRA', `rank ${input.lora.rank} on ${input.lora.targets.join(',')}, base ${input.quant}`])
  return rows
}

/** The estimate page of `rigfit estimate … --report FILE`: the breakdown and the sweeps over micro-batch and sequence. */
export function estimateReport(input: EstimateInput, result: EstimateResult): EstimateReport {
  // Without a device nothing runs out of memory: the sweeps stop at a few times the estimated value.
  const open = result.capacity === null
  const maxSeq =
    input.model.positions === 'learned'
      ? input.model.maxPositions
      : Math.max(input.model.maxPositions, input.seq)
  return {
    settings: settingsRows(input),
    device: input.device?.name ?? null,
    microBatch: input.microBatch,
    seq: input.seq,
    result,
    sweeps: {
      microBatch: sweep(input, 'microBatch', 1, open ? Math.max(16, 4 * input.microBatch) : SWEEP_LIMIT),
      seq: sweep(input, 'seq', 128, Math.min(maxSeq, open ? Math.max(4096, 4 * input.seq) : maxSeq)),
    },
  }
}

/** The estimate page of `rigfit report --estimate FILE`, from what `rigfit estimate --json` printed: no settings, so no sweeps. */
export async function readEstimateFile(path: string): Promise<EstimateReport> {
  const suggestion =
    'Pass what `rigfit estimate … --json` printed, saved to a file; or run `rigfit estimate … --report FILE`.'
  const read = await readInputText(path, MAX_INPUT_DOCUMENT_BYTES, DEFAULT_INPUT_TIMEOUT_MS)
  if (!read.ok) {
    throw new RigfitError(
      read.timedOut === true ? 'io' : 'input',
      'E_ESTIMATE_READ',
      `cannot read --estimate ${path}: ${read.message}`,
      {
        suggestion,
      },
    )
  }
  let value: unknown
  try {
    value = JSON.parse(read.text)
  } catch (error) {
    throw new RigfitError(
      'input',
      'E_ESTIMATE_JSON',
      `${path} is not valid JSON: ${describeJsonError(error)}`,
      {
        suggestion,
      },
    )
  }
  const parsed = EstimateResult.safeParse(value)
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    throw new RigfitError(
      'validation',
      'E_ESTIMATE_INVALID',
      `${path} is not an estimate: ${fields.slice(0, 5).join('; ')}`,
      {
        suggestion,
      },
    )
  }
  return { settings: [], device: null, microBatch: null, seq: null, result: parsed.data, sweeps: null }
}

/** `rigfit estimate … --report FILE`: the page of this estimate, written whole or not at all. */
export async function writeEstimateReport(
  path: string,
  force: boolean,
  input: EstimateInput,
  result: EstimateResult,
  rigfitVersion: string,
): Promise<WrittenReport> {
  return writeReport(
    path,
    { createdAt: new Date().toISOString(), rigfitVersion, estimate: estimateReport(input, result) },
    force,
  )
}
