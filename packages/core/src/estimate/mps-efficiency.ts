import type { EstimateDevice, Precision } from '../schemas/index.js'
import { shareAgainstA100 } from './mamf.js'

/**
 * Apple GPUs through PyTorch's MPS backend, which multiplies with Apple's Metal Performance Shaders. Their GEMMs reach
 * a smaller share of the GPU's peak than cuBLAS reaches of an A100's, and less in 16 bits than in 32: an Apple GPU
 * has no matrix units and multiplies 16-bit types at its FP32 rate, which is the peak rigfit prices it at.
 *
 * Source: philipturner/metal-flash-attention's README at 20f0d03, "Performance: Overview", square GEMMs from 1 to
 * 6144 on a 32-core Apple 7 GPU (the M1 Max, 10.6 TFLOPS): MPS's best F32 GEMM 8,482 GFLOPS (3072³), 80.0% of peak;
 * its best F16 GEMM 7,824 GFLOPS (3072³), 73.8%. Priced as an AMD Instinct is (rocm-efficiency.ts): the ratio of
 * that best share to the A100's best (`MAMF_SHARE`). A kernel measurement, not a fit: no published MPS training row
 * states every setting. Measured on the M1 Max only; the other Apple GPUs run the same MPS kernels and keep the same
 * share, for want of their own figure.
 */
const M1_MAX_PEAK_GFLOPS = 10_617
const MPS_BEST_GEMM_GFLOPS = { fp32: 8_482, sixteenBit: 7_824 } as const

/** Share of the fitted matmul efficiency an Apple GPU keeps under MPS (1 for any other device). */
export function mpsSustainedShare(device: Pick<EstimateDevice, 'kind'>, precision: Precision): number {
  if (device.kind !== 'mps') return 1
  const best = precision === 'fp32' ? MPS_BEST_GEMM_GFLOPS.fp32 : MPS_BEST_GEMM_GFLOPS.sixteenBit
  return shareAgainstA100(best / M1_MAX_PEAK_GFLOPS)
}
