import type { Advice } from '../schemas/training-plan.js'
import type { Workload } from '../schemas/workload.js'
import { MIN_FINETUNE_BATCH, MIN_FINETUNE_STEPS } from './batch-target.js'
import { datasetTokens, exampleSequence } from './candidates.js'

/**
 * A fine-tune whose data cannot give MIN_FINETUNE_STEPS steps at the smallest batch it may take: says so, with
 * the numbers, and the passes over the data that would (warm-up and decay need a few hundred steps).
 */
export function fewStepsWarning(
  workload: Workload,
  effectiveBatch: number,
  seq: number,
  steps: number,
): Advice | null {
  const tokens = datasetTokens(workload)
  if (workload.kind !== 'finetune' || tokens === null || steps >= MIN_FINETUNE_STEPS) return null
  const epochs = workload.epochs ?? 1
  const sequences = Math.floor((tokens * epochs) / seq)
  const floor = exampleSequence(workload)
  const why = workload.targetEffectiveBatch
    ? `at the ${effectiveBatch} sequences per step asked for`
    : `at ${effectiveBatch} sequences per step (a fine-tune's batch stays at ${MIN_FINETUNE_BATCH} or more)`
  const shortest =
    floor !== null && seq <= floor
      ? `; ${seq} tokens is already the shortest sequence that holds an average example`
      : ''
  const need = Math.ceil((MIN_FINETUNE_STEPS * effectiveBatch * seq) / tokens)
  return {
    id: 'finetune-few-steps',
    message: `The data holds ${sequences} sequences of ${seq} tokens over ${epochs} epoch(s): ${why} that is ${steps} optimizer steps, fewer than the ${MIN_FINETUNE_STEPS} a warm-up and decay need${shortest}. Train more passes (--epochs ${need}) or add data.`,
    source: 'generator',
    expectedGain: null,
  }
}
