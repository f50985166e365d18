import type { ModelSpec } from '../schemas/index.js'

/** What one MLP activation costs eager PyTorch, per element of the MLP's width. */
export interface ActivationOps {
  /** Kernels its forward launches. */
  kernels: number
  /** Tensors of the MLP's width autograd keeps for its backward (the input among them). */
  savedTensors: number
  /** Element sizes its forward reads and writes, every op reading its inputs and writing its output in full. */
  forwardTraffic: number
}

/**
 * Counted from Transformers' activations.py under PyTorch's saved-tensor hooks: `gelu_new` is pow, two scalar
 * products, an add, tanh, a scalar add, a scalar product and the final product (it keeps the input, tanh's output
 * and both factors of the product); `gelu_fast` is nine ops keeping seven tensors. A fused GELU or SiLU is one
 * kernel that keeps its input.
 */
const OPS: Readonly<Record<ModelSpec['activation'], ActivationOps>> = {
  fused: { kernels: 1, savedTensors: 1, forwardTraffic: 2 },
  'gelu-new': { kernels: 8, savedTensors: 4, forwardTraffic: 18 },
  'gelu-fast': { kernels: 9, savedTensors: 7, forwardTraffic: 21 },
}

/**
 * The cost of a GELU MLP's activation: the model's own expression where the stack runs the model's code
 * (`pythonActivations`), else one fused kernel.
 */
export function geluActivationOps(
  spec: Pick<ModelSpec, 'activation'>,
  pythonActivations: boolean,
): ActivationOps {
  return OPS[pythonActivations ? spec.activation : 'fused']
}
