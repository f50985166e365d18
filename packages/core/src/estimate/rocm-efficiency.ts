import type { EstimateDevice } from '../schemas/index.js'

/**
 * Why an AMD Instinct is priced below its quoted matrix peak: PyTorch's BF16 GEMMs on it (hipBLASLt, with TunableOp)
 * reach a far smaller share of the spec-sheet TFLOPS than cuBLAS reaches of an NVIDIA board's. The matmul efficiency
 * rigfit fits describes NVIDIA's GEMMs, most of its rows on the A100; an Instinct keeps the share of it that its
 * measured best GEMM keeps of the A100's.
 *
 * Source: the "Maximum Achievable Matmul FLOPS comparison table" (BF16) of stas00/ml-engineering,
 * compute/accelerator/README.md at 744d01e: `mamf-finder.py` searching matmul shapes for the highest TFLOPS on each
 * accelerator, the mean of 100 iterations after 50 warm-ups. NVIDIA A100 SXM 271.2 of 312 TFLOPS (86.9%, torch
 * 2.6.0+cu126); AMD MI300X 668.4 of 1300 (51.4%, torch 2.5.1 on ROCm 6.3, PYTORCH_TUNABLEOP_ENABLED=1); MI325X 784.9
 * of 1300 (60.4%, ROCm 6.2.4, TunableOp, 1000 W); MI355X 1565 of 2300 (68.0%, ROCm 7.0.2). A published kernel
 * measurement, not a fit to tokens/s rows: the only published AMD training row (`torch-mojo-backend.jsonl`, one
 * source) could not check a fitted constant held out. Instincts the table has not measured (MI250X, MI210, MI300A)
 * and Radeon cards keep the whole efficiency, for want of a figure.
 */
const MAMF_EFFICIENCY = {
  a100Sxm: 0.869,
  instinct: [
    { pattern: /\bMI355X\b/i, efficiency: 0.68 },
    { pattern: /\bMI325X\b/i, efficiency: 0.604 },
    { pattern: /\bMI300X\b/i, efficiency: 0.514 },
  ],
} as const

/** Share of the fitted matmul efficiency an AMD Instinct sustains (1 for any other device, or an unmeasured one). */
export function rocmSustainedShare(device: Pick<EstimateDevice, 'kind' | 'name'>): number {
  if (device.kind !== 'rocm') return 1
  const measured = MAMF_EFFICIENCY.instinct.find((entry) => entry.pattern.test(device.name))
  return measured ? measured.efficiency / MAMF_EFFICIENCY.a100Sxm : 1
}
