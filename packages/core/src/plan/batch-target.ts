import { generateModelShape, modelParts } from '../model/index.js'
import type { Mode } from '../schemas/common.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import type { Workload } from '../schemas/workload.js'
import { effectiveBatchOf } from './batch.js'
import { datasetTokens, exampleSequence } from './candidates.js'
import type { ModeBudget } from './modes.js'
import { pretrainRecipe, recipeBatchSequences } from './scaling-recipe.js'
import { MAX_PRETRAIN_EPOCHS } from './token-budget.js'

/**
 * Tokens per step a fine-tune aims for: far fewer than pretraining. Instruction-tuning recipes train 16-128
 * sequences per step (QLoRA, Dettmers et al. 2023, Table 9: 16-64; Alpaca: 128), here at 1k-token sequences.
 */
const FINETUNE_TOKENS_PER_STEP: Record<Mode, number> = {
  conservative: 32_768,
  balanced: 65_536,
  extreme: 131_072,
}

/** Optimizer steps a fine-tune makes at least when its data allows: warm-up and decay need a few hundred. */
export const MIN_FINETUNE_STEPS = 300

/** The smallest effective batch a fine-tune goes down to for more steps: below it the gradient gets noisy. */
export const MIN_FINETUNE_BATCH = 8

/** Tokens a run trains, as far as they are known before the search: --tokens, Chinchilla, or the data. */
function plannedTokens(workload: Workload, params: number, budget: ModeBudget): number {
  if (workload.kind === 'pretrain' && workload.targetTokens) return workload.targetTokens
  const data = datasetTokens(workload)
  const epochs = workload.epochs ?? (workload.kind === 'pretrain' ? MAX_PRETRAIN_EPOCHS : 1)
  const chinchilla = params * budget.tokensPerParam
  if (workload.kind === 'finetune') return data === null ? chinchilla : data * epochs
  return data === null ? chinchilla : Math.min(chinchilla, data * epochs)
}

/**
 * The model the pretraining batch is sized for: the one asked for, else the geometric middle of the mode's range
 * (the search then tries sizes around it at that batch).
 */
export function recipeModel(workload: Workload, budget: ModeBudget): ModelSpec {
  if (workload.model) return workload.model
  const [low, high] = budget.paramRange
  return generateModelShape(Math.sqrt(low * high))
}

/**
 * The effective batch in sequences the plan aims for: the user's, the elastic base batch's, the scaling recipe's
 * for pretraining (scaling-recipe.ts), or a fine-tune's, smaller when the data is small so the run still makes
 * MIN_FINETUNE_STEPS steps, never below MIN_FINETUNE_BATCH.
 */
export function targetEffectiveBatch(input: {
  workload: Workload
  baseBatch: number | null
  mode: Mode
  budget: ModeBudget
  gpus: number
  nodes: number
  /** The longest sequence the search tries. */
  seq: number
}): number {
  const { workload, mode, seq } = input
  if (workload.targetEffectiveBatch) return workload.targetEffectiveBatch
  if (input.baseBatch)
    return effectiveBatchOf({
      microBatch: input.baseBatch,
      gradAccum: 1,
      gpus: input.gpus,
      nodes: input.nodes,
    })
  if (workload.kind === 'pretrain') {
    const model = recipeModel(workload, input.budget)
    const params = modelParts(model).total
    return recipeBatchSequences(
      pretrainRecipe(model, seq, plannedTokens(workload, params, input.budget)),
      seq,
    )
  }
  const batch = Math.max(1, Math.round(FINETUNE_TOKENS_PER_STEP[mode] / seq))
  const tokens = datasetTokens(workload)
  if (tokens === null) return batch
  const forSteps = Math.floor((tokens * (workload.epochs ?? 1)) / (MIN_FINETUNE_STEPS * seq))
  return Math.max(Math.min(batch, MIN_FINETUNE_BATCH), Math.min(batch, forSteps))
}

/** The floor under the effective batch: a fine-tune's MIN_FINETUNE_BATCH unless the user set the batch. */
export function minEffectiveBatch(workload: Workload, baseBatch: number | null): number {
  if (workload.kind !== 'finetune' || workload.targetEffectiveBatch || baseBatch) return 1
  if (workload.pins?.microBatch !== undefined || workload.pins?.gradAccum !== undefined) return 1
  return MIN_FINETUNE_BATCH
}

/**
 * A fine-tune's sequences when its data is small: the longest that still gives MIN_FINETUNE_STEPS steps of
 * MIN_FINETUNE_BATCH sequences, never shorter than an average example (none is cut short). Packing a small dataset
 * into long sequences leaves a handful of steps, too few for warm-up and decay.
 */
export function sequencesForSteps(workload: Workload, seqs: number[]): number[] {
  const tokens = datasetTokens(workload)
  if (workload.kind !== 'finetune' || workload.seq || tokens === null || seqs.length === 0) return seqs
  const longest = (tokens * (workload.epochs ?? 1)) / (MIN_FINETUNE_STEPS * MIN_FINETUNE_BATCH)
  const kept = seqs.filter((seq) => seq <= longest)
  if (kept.length > 0) return kept
  const floor = exampleSequence(workload) ?? 128
  const shortest = Math.min(...seqs)
  const power = 2 ** Math.floor(Math.log2(Math.max(1, longest)))
  return [Math.min(shortest, Math.max(floor, power))]
}

/**
 * The largest micro-batch that does not overshoot the target effective batch on its own: one step of every rank
 * at this micro-batch is at most the target (at least one sequence per rank).
 */
export function microBatchCeiling(target: number, gpus: number, nodes: number): number {
  const ranks = effectiveBatchOf({ microBatch: 1, gradAccum: 1, gpus, nodes })
  return Math.max(1, Math.floor(target / ranks))
}
