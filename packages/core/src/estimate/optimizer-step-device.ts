import type { EstimateDevice, EstimateInput } from '../schemas/estimate.js'

type OptimizerImpl = EstimateInput['optimizerImpl']

/**
 * The optimizer step PyTorch runs on a device when the code asks for its default. `torch.optim`'s default picks the
 * multi-tensor (foreach) step only when every parameter is on a device with foreach kernels: CUDA (ROCm builds
 * included) and XPU (`_get_foreach_kernels_supported_devices` in torch/utils/_foreach_utils.py). On the CPU and on
 * Apple's MPS it loops over the tensors, one set of ops per parameter, with no whole-model temporaries. A fused step
 * (`fused=True`) is asked for by name and runs as asked.
 */
export function optimizerStepOn(
  impl: OptimizerImpl,
  device: Pick<EstimateDevice, 'kind'> | null,
): OptimizerImpl {
  return impl === 'foreach' && (device?.kind === 'cpu' || device?.kind === 'mps') ? 'per-tensor' : impl
}
