import type { EstimateInput, ModelSpec } from '../schemas/index.js'

/**
 * Whether a mixture of experts' GEMMs run in fp32 although the step runs under autocast: the stack runs its experts
 * outside autocast (`expertsOutsideAutocast`: Transformers 5's `@use_experts_implementation`, whose grouped GEMMs
 * are not autocast-enabled), and the experts' weights are fp32 because they train in full under mixed precision.
 * A LoRA base loaded in the half type, or pure 16-bit training, keeps them in the half type.
 */
export function expertsInFp32(
  input: Pick<EstimateInput, 'expertsOutsideAutocast' | 'model' | 'lora' | 'precision'>,
): boolean {
  return (
    input.expertsOutsideAutocast &&
    input.model.experts !== null &&
    input.lora === null &&
    input.precision.endsWith('-mixed')
  )
}

/**
 * The experts' share of `flopsPerToken`: each token's top-k experts, forward and both backward GEMMs, and the
 * forward again when checkpointing recomputes it.
 */
export function expertFlopsPerToken(spec: ModelSpec, gradCheckpointing: boolean): number {
  const topK = spec.experts?.topK ?? 0
  const expertWeights = (spec.mlp === 'gelu' ? 2 : 3) * spec.hidden * spec.ffn
  return 2 * spec.layers * topK * expertWeights * (gradCheckpointing ? 4 : 3)
}
