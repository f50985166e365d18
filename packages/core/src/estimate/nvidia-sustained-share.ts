import type { EstimateDevice } from '../schemas/index.js'
import { MAMF_SHARE, shareAgainstA100 } from './mamf.js'

/**
 * NVIDIA boards whose matrix rate under continuous load is published and differs from what the fitted efficiency
 * (A100 rows, and Hopper's fitted sustained share) would give them.
 *
 * - **A Tesla T4 is capped at 70 W.** Under continuous matrix work its clock falls far below the 1,590 MHz boost its
 *   65 TFLOPS are quoted at: cuBLAS's FP16 4096 × 4096 × 4096 GEMM, the mean of 100 iterations, sustains about
 *   24 TFLOPS, which NVIDIA's forum answer calls the expected effect of power capping for "approximately continuous
 *   matrix multiply operations on a T4" (NVIDIA Developer Forums, "About GPU peak performance",
 *   forums.developer.nvidia.com/t/about-gpu-peak-performance/264462). Priced as an AMD Instinct is
 *   (rocm-efficiency.ts): the T4 keeps its measured share's ratio to the A100's best GEMM.
 * - **Blackwell datacenter GPUs (B200, B300, GB200) train at their power limits as Hopper does,** and their best
 *   BF16 GEMMs reach less of their peak than an H100's (`MAMF_SHARE`): they keep Hopper's fitted sustained share,
 *   scaled by that ratio.
 *
 * Other boards keep the whole efficiency: no published sustained figure is known for them (an L4 is capped at 72 W
 * too, unmeasured).
 */
const T4_SUSTAINED_FP16_TFLOPS = 24
const T4_PEAK_FP16_TFLOPS = 65

const MEASURED_BOARDS: readonly { pattern: RegExp; share: (hopperShare: number) => number }[] = [
  { pattern: /\bT4\b/i, share: () => shareAgainstA100(T4_SUSTAINED_FP16_TFLOPS / T4_PEAK_FP16_TFLOPS) },
  { pattern: /\bGB200\b/i, share: (hopper) => (hopper * MAMF_SHARE.gb200) / MAMF_SHARE.h100Sxm },
  { pattern: /\bB200\b/i, share: (hopper) => (hopper * MAMF_SHARE.b200) / MAMF_SHARE.h100Sxm },
  { pattern: /\bB300\b/i, share: (hopper) => (hopper * MAMF_SHARE.b300) / MAMF_SHARE.h100Sxm },
]

/** Share of the fitted matmul efficiency an NVIDIA board sustains under load (1 where nothing is measured). */
export function nvidiaSustainedShare(
  device: Pick<EstimateDevice, 'kind' | 'name'>,
  hopperShare: number,
): number {
  if (device.kind !== 'cuda') return 1
  const measured = MEASURED_BOARDS.find((board) => board.pattern.test(device.name))
  return measured ? measured.share(hopperShare) : 1
}
