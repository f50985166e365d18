import type { Workload } from '../schemas/workload.js'
import { pretrainRecipe } from './scaling-recipe.js'
import type { Candidate } from './search.js'

/** Parameters above which a model counts as large for its learning rate (the 30B-class models of the papers). */
const LARGE_MODEL = 20e9

/**
 * Peak learning rate by method, origin and size. Pretraining: DeepSeek LLM's scaling law for the run's compute
 * (scaling-recipe.ts). Adapters: 2e-4 up to ~13B, 1e-4 for 33B and larger (QLoRA paper, Table 9). Full
 * fine-tuning: 2e-5 keeps the pretrained weights close (Alpaca, Llama 2 SFT), 5e-5 for models under 1B, 1e-5 for
 * the large ones.
 */
export function learningRateFor(best: Candidate, workload: Workload, tokens: number): number {
  const params = best.result.params.total
  if (best.method !== 'full') return params >= LARGE_MODEL ? 1e-4 : 2e-4
  if (workload.kind === 'finetune') return params < 1e9 ? 5e-5 : params >= LARGE_MODEL ? 1e-5 : 2e-5
  return roundRate(pretrainRecipe(best.model, best.seq, tokens).learningRate)
}

export function learningRateReason(best: Candidate, workload: Workload, tokens: number): string {
  const large = best.result.params.total >= LARGE_MODEL
  if (best.method !== 'full') {
    return large
      ? 'adapters on a model of 20B or more train at 1e-4 (QLoRA paper, Table 9: 33B and 65B)'
      : 'adapters train at 2e-4 (QLoRA paper, Table 9: 7B and 13B)'
  }
  if (workload.kind === 'finetune') {
    return `full fine-tuning keeps the pretrained weights close: 5e-5 under 1B parameters, 2e-5 to 20B, 1e-5 above (this model: ${large ? 'above' : best.result.params.total < 1e9 ? 'under 1B' : '1B-20B'})`
  }
  const recipe = pretrainRecipe(best.model, best.seq, tokens)
  return `DeepSeek LLM's scaling law (arXiv:2401.02954, section 3.1): peak rate 0.3118 x C^-0.125 for this run's compute C = ${recipe.compute.toExponential(2)} FLOPs (non-embedding FLOPs per token x ${tokens.toExponential(2)} tokens)${recipe.extrapolated ? (recipe.compute < 1e17 ? ', held at the rate of 1e17 FLOPs, the lower edge of the range the law was fitted on' : ', extrapolated beyond the 1e17-3e20 FLOPs it was fitted on (DeepSeek LLM 67B trained at its value)') : ''}`
}

/** Two significant figures, as rates are written in configs. */
function roundRate(rate: number): number {
  return Number(rate.toPrecision(2))
}
