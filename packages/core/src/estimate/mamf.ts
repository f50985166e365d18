/**
 * The largest BF16 matmul rate each accelerator is measured to reach, as a share of its quoted dense peak: the
 * "Maximum Achievable Matmul FLOPS comparison table" of stas00/ml-engineering (compute/accelerator/README.md at
 * 744d01e), where `mamf-finder.py` searches matmul shapes for the highest TFLOPS, the mean of 100 iterations after 50
 * warm-ups, on each accelerator with the same method. rigfit's fitted matmul efficiency describes NVIDIA's GEMMs,
 * most of its rows on A100s and H100s; a device the fit has no rows for keeps the ratio of its measured share to
 * that of the device its efficiency was fitted on.
 */
export const MAMF_SHARE = {
  /** NVIDIA A100 SXM: 271.2 of 312 TFLOPS (torch 2.6.0+cu126). */
  a100Sxm: 0.869,
  /** NVIDIA H100 SXM: 794.5 of 989 (torch 2.7.0+cu126); "H200 is the same". */
  h100Sxm: 0.803,
  /** NVIDIA B200 SXM: 1745 of 2250 (torch 2.7.1+cu128). */
  b200: 0.776,
  /** NVIDIA B300 SXM: 1769 of 2250 (torch 2.9.1+cu130). */
  b300: 0.786,
  /** NVIDIA GB200: 1822 of 2500 (torch 2.10.0.dev+cu130). */
  gb200: 0.729,
  /** AMD MI355X: 1565 of 2300 (ROCm 7.0.2). */
  mi355x: 0.68,
  /** AMD MI325X: 784.9 of 1300 (ROCm 6.2.4, TunableOp, 1000 W). */
  mi325x: 0.604,
  /** AMD MI300X: 668.4 of 1300 (torch 2.5.1 on ROCm 6.3, PYTORCH_TUNABLEOP_ENABLED=1). */
  mi300x: 0.514,
} as const

/**
 * A measured share of peak as a share of the fitted efficiency, which describes the A100's GEMMs: the ratio of the
 * device's best GEMM to the A100's.
 */
export function shareAgainstA100(measuredShareOfPeak: number): number {
  return measuredShareOfPeak / MAMF_SHARE.a100Sxm
}
