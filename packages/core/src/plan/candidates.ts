import { RigfitError } from '../errors.js'
import { generateModelShape } from '../model/index.js'
import type { Mode, Quantization } from '../schemas/common.js'
import type { LoraSpec } from '../schemas/estimate.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import type { SettingPins, Workload } from '../schemas/workload.js'
import { TEXT_BYTES_PER_TOKEN } from '../units.js'
import type { ModeBudget } from './modes.js'

/** How a fine-tune trains: every weight, adapters on a 16-bit base, or adapters on a 4-bit base. */
export type Method = 'full' | 'lora' | 'qlora'

/** One fine-tuning method as the search tries it. */
export interface MethodChoice {
  method: Method
  lora: LoraSpec | null
  quant: Quantization
}

/** LoRA settings by mode: more rank and more wrapped layers as the mode spends more memory. */
export const LORA_BY_MODE: Record<Mode, LoraSpec> = {
  conservative: { rank: 8, targets: ['q', 'v'], dropout: 0 },
  balanced: { rank: 16, targets: ['q', 'k', 'v', 'o'], dropout: 0 },
  extreme: { rank: 64, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'], dropout: 0 },
}

/** Why each mode's adapters are what they are, with the sources behind them. */
export const LORA_REASON_BY_MODE: Record<Mode, string> = {
  conservative:
    "low rank on the query and value projections, the LoRA paper's setting that matched full fine-tuning on GPT-3 (Hu et al. 2021, section 7.1), for the least memory",
  balanced:
    'every attention projection: more of the model adapts for little more memory (LoRA paper, Table 5)',
  extreme:
    'every linear layer, attention and MLP: QLoRA found adapters on all of them needed to match full fine-tuning (Dettmers et al. 2023, section 4)',
}

/** Fine-tuning method preference by mode: conservative adapts a little, the others train fully when it fits. */
export const METHOD_ORDER: Record<Mode, Method[]> = {
  conservative: ['lora', 'qlora', 'full'],
  balanced: ['full', 'lora', 'qlora'],
  extreme: ['full', 'lora', 'qlora'],
}

/** Average bytes of raw text per token for BPE tokenizers on English text. */

/** A method as the search tries it in this mode, with the adapter and quantisation pins the user gave. */
export function methodChoice(method: Method, mode: Mode, pins: SettingPins = {}): MethodChoice {
  const byMode = LORA_BY_MODE[mode]
  return {
    method,
    lora:
      method === 'full'
        ? null
        : { rank: pins.loraRank ?? byMode.rank, targets: pins.loraTargets ?? byMode.targets, dropout: 0 },
    // LoRA may run over an 8-bit base when the user pins --quant int8; QLoRA is the 4-bit NF4 base.
    quant: method === 'qlora' ? 'nf4' : method === 'lora' && pins.quant === 'int8' ? 'int8' : 'none',
  }
}

/** The model shapes to try: the fine-tuned model, or generated shapes across the mode's range and below it. */
export function modelCandidates(
  workload: Workload,
  budget: ModeBudget,
): { spec: ModelSpec; inRange: boolean }[] {
  // A fine-tune trains its model; a pretraining run of a chosen size (--params, --method pretrain) trains that one.
  if (workload.model) return [{ spec: workload.model, inRange: true }]
  if (workload.kind === 'finetune') {
    throw new RigfitError('input', 'E_NO_MODEL', 'Fine-tuning needs a model.', {
      suggestion: 'Pass --model <catalog id | config.json>.',
    })
  }
  const [low, high] = budget.paramRange
  const inRange = geometric(low, high, 8).map((target) => ({
    spec: generateModelShape(target),
    inRange: true,
  }))
  // Fallbacks below the range for hardware too small for it.
  const below = geometric(2e6, low, 5)
    .slice(0, -1)
    .map((target) => ({ spec: generateModelShape(target), inRange: false }))
  return [...inRange, ...below]
}

/**
 * The sequence lengths a plan may train at, longest first: the one the user asked for, else the mode's range
 * within the model's context (a fine-tuned model keeps its context length; a generated one takes the plan's).
 */
export function sequenceCandidates(workload: Workload, budget: ModeBudget, cap: number): number[] {
  if (workload.seq) return [workload.seq]
  const floor = exampleSequence(workload) ?? 0
  const [low, high] = [Math.max(budget.seqRange[0], floor), Math.max(budget.seqRange[1], floor)]
  const maxPositions = workload.model?.maxPositions ?? Number.POSITIVE_INFINITY
  const seqs = powersOfTwo(low, high).filter((seq) => seq <= cap && seq <= maxPositions)
  return (seqs.length > 0 ? seqs : [Math.min(low, cap, maxPositions)]).reverse()
}

/**
 * Sequences below those candidates, longest first: the last resort, never below what the user asked for, nor
 * below an average example of a fine-tune's data (a shorter one would cut every example short).
 */
export function shorterSequences(workload: Workload, seqs: number[], cap: number): number[] {
  if (workload.seq) return []
  const shortest = Math.min(seqs[seqs.length - 1] ?? 512, cap)
  return powersOfTwo(exampleSequence(workload) ?? 128, shortest / 2).reverse()
}

/**
 * The shortest sequence, a power of two, that holds an average example of a fine-tune's data (within the model's
 * context), or null when the examples' length is not known. Pretraining packs documents into any length.
 */
export function exampleSequence(workload: Workload): number | null {
  if (workload.kind !== 'finetune' || !workload.tokensPerExample) return null
  const seq = 2 ** Math.ceil(Math.log2(Math.max(128, workload.tokensPerExample)))
  return Math.min(seq, workload.model?.maxPositions ?? seq)
}

/**
 * Hours the run may take: the user's --time-budget; else, when the user said what to train (a fine-tune's data,
 * pretraining --tokens), as long as training all of it takes; else the mode's longest run.
 */
export function runHoursBound(workload: Workload, budget: ModeBudget): number | null {
  if (workload.timeBudgetHours !== null) return workload.timeBudgetHours
  const asked =
    workload.kind === 'pretrain' ? workload.targetTokens != null : datasetTokens(workload) !== null
  return asked ? null : budget.hoursRange[1]
}

/** Tokens in the dataset: as counted by the user, else from its size in bytes; null when neither is given. */
export function datasetTokens(workload: Workload): number | null {
  if (workload.datasetTokens != null) return workload.datasetTokens
  return workload.datasetBytes === null ? null : Math.floor(workload.datasetBytes / TEXT_BYTES_PER_TOKEN)
}

/**
 * Micro-batch candidates: every size up to 16, then steps of a quarter of the power of two below (20, 24, 28,
 * 32, 40, ...), so the search fills memory in fine steps without trying every integer.
 */
export function microBatchSteps(high: number): number[] {
  const out: number[] = []
  for (let value = 1; value <= Math.min(16, high); value += 1) out.push(value)
  for (let base = 16; base < high; base *= 2) {
    for (let step = 1; step <= 4; step += 1) {
      const value = base + (base / 4) * step
      if (value <= high) out.push(value)
    }
  }
  return out
}

export function powersOfTwo(low: number, high: number): number[] {
  const out: number[] = []
  for (let value = 1; value <= high; value *= 2) if (value >= low) out.push(value)
  return out
}

function geometric(low: number, high: number, count: number): number[] {
  if (count <= 1) return [low]
  const ratio = (high / low) ** (1 / (count - 1))
  return Array.from({ length: count }, (_, i) => Math.round(low * ratio ** i))
}
