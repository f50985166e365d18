/**
 * Token budget: the Chinchilla tokens for the mode's tokens-per-parameter ratio, bounded by what the time
 * budget allows at the predicted rate and by the dataset (for fine-tuning). Whichever binds is reported.
 */
export interface TokenBudgetInput {
  params: number
  tokensPerParam: number
  tokensPerSecond: number
  /** Hours the run may take; null for no bound. */
  maxHours: number | null
  /** Tokens the dataset holds times the epochs allowed; null when unknown or when pretraining. */
  datasetTokens: number | null
}

export interface TokenBudget {
  budget: number
  tokensPerParam: number
  chinchillaTokens: number
  timeBudgetTokens: number | null
  binding: 'chinchilla' | 'time-budget' | 'dataset'
}

export function tokenBudget(input: TokenBudgetInput): TokenBudget {
  const chinchillaTokens = Math.round(input.params * input.tokensPerParam)
  const timeBudgetTokens =
    input.maxHours === null ? null : Math.floor(input.tokensPerSecond * input.maxHours * 3600)
  let budget = input.datasetTokens ?? chinchillaTokens
  let binding: TokenBudget['binding'] = input.datasetTokens === null ? 'chinchilla' : 'dataset'
  if (timeBudgetTokens !== null && timeBudgetTokens < budget) {
    budget = timeBudgetTokens
    binding = 'time-budget'
  }
  return {
    budget,
    tokensPerParam: input.params > 0 ? budget / input.params : 0,
    chinchillaTokens,
    timeBudgetTokens,
    binding,
  }
}
