/**
 * Token budget: what the run trains. The bounds are the Chinchilla tokens for the mode's tokens-per-parameter
 * ratio (pretraining only: a fine-tune trains its data, not a ratio), the dataset (one epoch for a fine-tune; at
 * most `MAX_PRETRAIN_EPOCHS` passes for pretraining) and what the time budget allows at the predicted rate. The
 * tightest binds and is reported. Given the tokens of one optimizer step, the budget is whole steps: rounded
 * down, or one step when even one is more than the bound (`oneStepOverBound` says so).
 */
export interface TokenBudgetInput {
  params: number
  tokensPerParam: number
  tokensPerSecond: number
  /** Hours the run may take; null for no bound. */
  maxHours: number | null
  /**
   * What is trained. Without it, `datasetTokens` is a bound recorded earlier (already in epochs) that replaces
   * the Chinchilla bound, as when a plan is re-budgeted at another speed.
   */
  kind?: 'pretrain' | 'finetune'
  /** Tokens in the dataset; null when its size is unknown. */
  datasetTokens: number | null
  /** Tokens one optimizer step trains (effective batch x sequence): the budget is then whole steps. */
  tokensPerStep?: number
  /** Passes over the dataset the user asked for; null: one for a fine-tune, up to MAX_PRETRAIN_EPOCHS pretraining. */
  epochs?: number | null
  /** Pretraining: the tokens asked for (`--tokens`), which replace the Chinchilla bound. */
  targetTokens?: number | null
}

export interface TokenBudget {
  budget: number
  tokensPerParam: number
  chinchillaTokens: number
  timeBudgetTokens: number | null
  binding: 'chinchilla' | 'target' | 'time-budget' | 'dataset'
  /** Optimizer steps; null without `tokensPerStep`. */
  steps: number | null
  /** Passes over the dataset the budget makes; null when its size is unknown or the bound was recorded. */
  epochs: number | null
  /** The bound is smaller than one optimizer step: the budget is that one step. */
  oneStepOverBound: boolean
}

/**
 * Passes over the same data a pretraining run may make: up to about four epochs, repeated tokens are worth
 * nearly as much as new ones; beyond that their value decays fast (Muennighoff et al. 2023, "Scaling
 * Data-Constrained Language Models").
 */
export const MAX_PRETRAIN_EPOCHS = 4

export function tokenBudget(input: TokenBudgetInput): TokenBudget {
  const chinchillaTokens = Math.round(input.params * input.tokensPerParam)
  const timeBudgetTokens =
    input.maxHours === null ? null : Math.floor(input.tokensPerSecond * input.maxHours * 3600)
  const bounds: { binding: TokenBudget['binding']; tokens: number }[] = []
  const dataset = input.datasetTokens
  if (input.kind === undefined) {
    bounds.push(
      dataset === null
        ? { binding: 'chinchilla', tokens: chinchillaTokens }
        : { binding: 'dataset', tokens: dataset },
    )
  } else {
    if (input.kind === 'pretrain')
      bounds.push(
        input.targetTokens
          ? { binding: 'target', tokens: input.targetTokens }
          : { binding: 'chinchilla', tokens: chinchillaTokens },
      )
    const epochs = input.epochs ?? (input.kind === 'pretrain' ? MAX_PRETRAIN_EPOCHS : 1)
    if (dataset !== null) bounds.push({ binding: 'dataset', tokens: Math.floor(dataset * epochs) })
  }
  if (timeBudgetTokens !== null) bounds.push({ binding: 'time-budget', tokens: timeBudgetTokens })
  // A fine-tune of unknown size with no time bound has nothing to bound it: the Chinchilla figure stands in.
  if (bounds.length === 0) bounds.push({ binding: 'chinchilla', tokens: chinchillaTokens })
  const tightest = bounds.reduce((a, b) => (b.tokens < a.tokens ? b : a))
  let budget = tightest.tokens
  let steps: number | null = null
  let oneStepOverBound = false
  if (input.tokensPerStep !== undefined && input.tokensPerStep > 0) {
    const whole = Math.floor(budget / input.tokensPerStep)
    oneStepOverBound = whole === 0
    steps = Math.max(1, whole)
    budget = steps * input.tokensPerStep
  }
  return {
    budget,
    tokensPerParam: input.params > 0 ? budget / input.params : 0,
    chinchillaTokens,
    timeBudgetTokens,
    binding: tightest.binding,
    steps,
    epochs: input.kind !== undefined && dataset ? budget / dataset : null,
    oneStepOverBound,
  }
}
