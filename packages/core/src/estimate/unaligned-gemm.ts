import type { EstimateInput } from '../schemas/index.js'

/**
 * The rate of a 16-bit GEMM with a dimension that is not a multiple of 8 elements, as a share of an aligned one's.
 * The tensor cores' fast kernels load 16-byte vectors; for other shapes cuBLAS falls back to kernels that load one
 * element at a time (`cutlass_75_tensorop_bf16_s1688gemm_bf16_*_align1`). Measured on an H200 with PyTorch 2.11
 * (`examples/calibrate/hf_step_profile.py`, GPT-2 at 8 × 1,024 tokens under bf16 autocast): the three GEMMs of its
 * 50,257-wide head took 15.4 ms of a 57.6 ms step, 122 TFLOP/s, against the 679 TFLOP/s rigfit's fitted efficiency
 * gives an aligned GEMM there. Models that pad their vocabulary (nanoGPT's 50,304) keep the fast kernels.
 */
export const UNALIGNED_GEMM_SHARE = 0.17

/** Elements a 16-bit GEMM's dimensions must be a multiple of for the aligned kernels: 16 bytes. */
const ALIGNED_ELEMENTS = 8

/**
 * FLOPs to add to the step's count so that an unaligned vocabulary head runs at its own rate: its forward GEMM,
 * the gradient of its input, and the gradient of its weight when it trains, on a CUDA GPU in a 16-bit type (fp32
 * GEMMs without TF32 run on the CUDA cores, which need no alignment), in eager mode: torch.compile's Inductor pads
 * such GEMMs to aligned shapes (its `pad_mm` pass, on by default through `shape_padding`).
 */
export function unalignedHeadExtraFlops(
  input: Pick<EstimateInput, 'model' | 'head' | 'precision' | 'device' | 'compile'>,
  headTrains: boolean,
): number {
  const spec = input.model
  const unaligned = spec.vocab % ALIGNED_ELEMENTS !== 0
  const eagerCuda = input.device?.kind === 'cuda' && !input.compile
  if (!unaligned || input.head !== 'lm' || input.precision === 'fp32' || !eagerCuda) return 0
  const gemms = headTrains ? 3 : 2
  return 2 * spec.hidden * spec.vocab * gemms * (1 / UNALIGNED_GEMM_SHARE - 1)
}
