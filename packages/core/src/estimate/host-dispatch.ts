import type { EstimateInput } from '../schemas/index.js'
import type { EstimateTuning } from './estimate.js'
import { kernelsPerMicroStep, optimizerStepKernels } from './kernels.js'

/**
 * Seconds of one step the host spends issuing eager PyTorch's ops one at a time: the Python call, autograd's
 * bookkeeping and the ATen dispatcher for each op, then the launch (`cudaLaunchKernel` on a GPU; on a CPU the start
 * and join of the op's parallel region). Every device pays it, the CPU too: there the same cores run the dispatch
 * and then the op, one after the other, so none of it hides behind the compute. A small model on a many-core CPU
 * shows it, where a step's few GFLOPs take milliseconds and the ~1,000 ops around them (the per-tensor AdamW loop
 * PyTorch runs off CUDA among them) take as long again: DevOnBike/Overfit's PyTorch 2.11 GPT-1 step on a Ryzen 9
 * 9950X3D (`devonbike-overfit.jsonl`). The cost per op is `kernelOverheadSeconds`, the same on every device.
 */
export function hostDispatchSeconds(input: EstimateInput, tuning: EstimateTuning): number {
  return (
    tuning.kernelOverheadSeconds *
    (input.gradAccum * kernelsPerMicroStep(input) + optimizerStepKernels(input))
  )
}
