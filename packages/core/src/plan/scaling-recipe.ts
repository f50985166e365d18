import { modelParts } from '../model/params.js'
import type { ModelSpec } from '../schemas/model-spec.js'

/**
 * Pretraining batch and peak learning rate from DeepSeek LLM's hyperparameter scaling laws (Bi et al. 2024,
 * "DeepSeek LLM: Scaling Open-Source Language Models with Longtermism", arXiv:2401.02954, section 3.1):
 * B_opt = 0.2920 C^0.3271 tokens and eta_opt = 0.3118 C^-0.1250, with C = M D the compute budget in FLOPs, M the
 * non-embedding FLOPs per token and D the training tokens. Fitted on 1e17-3e20 FLOPs and used for their 7B and 67B
 * runs; the paper finds a wide band of near-optimal values around the fit, so rounding the batch to a power of two
 * stays within it.
 */
export const DEEPSEEK_RECIPE = {
  batch: { coefficient: 0.292, exponent: 0.3271 },
  learningRate: { coefficient: 0.3118, exponent: -0.125 },
  fittedCompute: [1e17, 3e20] as const,
  source: 'DeepSeek LLM scaling laws (arXiv:2401.02954, section 3.1)',
}

/**
 * Non-embedding FLOPs per token for a training step (DeepSeek LLM, eq. 2: 72 n_layer d_model^2 + 12 n_layer d_model
 * l_seq for a standard block): six FLOPs per block parameter plus attention over the sequence.
 */
export function nonEmbeddingFlopsPerToken(spec: ModelSpec, seq: number): number {
  const blocks = modelParts(spec).layerActive * spec.layers
  return 6 * blocks + 12 * spec.layers * spec.hidden * seq
}

export interface PretrainRecipe {
  /** Compute budget C = M x D, in FLOPs. */
  compute: number
  batchTokens: number
  learningRate: number
  /** C lies outside the range the laws were fitted on: the values are extrapolated. */
  extrapolated: boolean
}

/** The recipe's batch (tokens per step) and peak learning rate for training `spec` on `tokens` at `seq`. */
export function pretrainRecipe(spec: ModelSpec, seq: number, tokens: number): PretrainRecipe {
  const compute = Math.max(1, nonEmbeddingFlopsPerToken(spec, seq) * Math.max(1, tokens))
  const { batch, learningRate, fittedCompute } = DEEPSEEK_RECIPE
  return {
    compute,
    batchTokens: batch.coefficient * compute ** batch.exponent,
    // Below the fitted range the law's rate keeps rising; the rate at its lower edge is kept instead.
    learningRate: learningRate.coefficient * Math.max(compute, fittedCompute[0]) ** learningRate.exponent,
    extrapolated: compute < fittedCompute[0] || compute > fittedCompute[1],
  }
}

/** The recipe's batch in sequences of `seq` tokens, rounded to the nearest power of two (at least one). */
export function recipeBatchSequences(recipe: PretrainRecipe, seq: number): number {
  return 2 ** Math.max(0, Math.round(Math.log2(recipe.batchTokens / seq)))
}
