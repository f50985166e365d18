import type { EstimateDevice, EstimateInput } from '../schemas/estimate.js'
import type { StackMechanisms } from '../schemas/stack.js'

/**
 * The CUDA context and kernels of a stack that loads every CUDA module at start-up (PyTorch before 2.0, or CUDA
 * before 11.7): 1343 MB measured by Transformers' v4.21 "Efficient Training on a Single GPU" page (CUDA 11.2, V100).
 */
export const EAGER_CUDA_CONTEXT_BYTES = 1343 * 2 ** 20

/** The mechanism flags a user may still pass over the stack's defaults (`--upcast-logits`, `--adapter-dtype` …). */
export type StackOverrides = Partial<
  Pick<
    EstimateInput,
    | 'upcastLogits'
    | 'adapterDtype'
    | 'optimizerImpl'
    | 'quantKeepsInputs'
    | 'frozenStaysGathered'
    | 'cudaContextBytes'
  >
>

/** The estimator fields the stack alone decides for a run of `seq` positions on `device`. */
export function stackEstimateFields(
  stack: StackMechanisms,
  seq: number,
  device: Pick<EstimateDevice, 'kind'> | null,
): Pick<
  EstimateInput,
  | 'upcastLogits'
  | 'adapterDtype'
  | 'quantKeepsInputs'
  | 'frozenStaysGathered'
  | 'cudaContextBytes'
  | 'lossChunks'
  | 'kbitFp32Casts'
  | 'flashAttention2'
  | 'pythonActivations'
  | 'expertsOutsideAutocast'
> {
  return {
    upcastLogits: stack.upcastLogits,
    adapterDtype: stack.adapterDtype,
    quantKeepsInputs: stack.quantKeepsInputs,
    frozenStaysGathered: stack.frozenStaysGathered,
    cudaContextBytes:
      !stack.lazyModuleLoading && (device === null || device.kind === 'cuda')
        ? EAGER_CUDA_CONTEXT_BYTES
        : null,
    lossChunks:
      stack.lossChunkPositions === null ? stack.lossChunks : Math.ceil(seq / stack.lossChunkPositions),
    kbitFp32Casts: stack.kbitFp32Casts,
    flashAttention2: stack.flashAttention2,
    pythonActivations: stack.pythonActivations,
    expertsOutsideAutocast: stack.expertsOutsideAutocast,
  }
}
