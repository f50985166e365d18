import type { Workload } from '../schemas/workload.js'
import type { Candidate } from './search.js'

/** Parameters above which a model counts as large for its learning rate (the 30B-class models of the papers). */
const LARGE_MODEL = 20e9

/**
 * Peak learning rate by method and model size. Pretraining: smaller models take larger rates (GPT-3 paper, Table
 * 2.1). Adapters: 2e-4 up to ~13B, 1e-4 for 33B and larger (QLoRA paper, Table 9). Full fine-tuning: 2e-5 keeps
 * the pretrained weights close (Alpaca, Llama 2 SFT), 5e-5 for models under 1B, 1e-5 for the large ones.
 */
export function learningRateFor(best: Candidate, workload: Workload): number {
  const params = best.result.params.total
  if (best.method !== 'full') return params >= LARGE_MODEL ? 1e-4 : 2e-4
  if (workload.kind === 'finetune') return params < 1e9 ? 5e-5 : params >= LARGE_MODEL ? 1e-5 : 2e-5
  return params < 100e6 ? 6e-4 : params < 400e6 ? 3e-4 : params < 2e9 ? 2e-4 : 1.5e-4
}

export function learningRateReason(best: Candidate, workload: Workload): string {
  const large = best.result.params.total >= LARGE_MODEL
  if (best.method !== 'full') {
    return large
      ? 'adapters on a model of 20B or more train at 1e-4 (QLoRA paper, Table 9: 33B and 65B)'
      : 'adapters train at 2e-4 (QLoRA paper, Table 9: 7B and 13B)'
  }
  if (workload.kind === 'finetune') {
    return `full fine-tuning keeps the pretrained weights close: 5e-5 under 1B parameters, 2e-5 to 20B, 1e-5 above (this model: ${large ? 'above' : best.result.params.total < 1e9 ? 'under 1B' : '1B-20B'})`
  }
  return 'peak rate by model size: smaller models take larger rates (GPT-3 paper, Table 2.1)'
}
