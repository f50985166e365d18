import type { EstimateDevice } from '../schemas/index.js'
import { MAMF_SHARE, shareAgainstA100 } from './mamf.js'

/**
 * Why an AMD Instinct is priced below its quoted matrix peak: PyTorch's BF16 GEMMs on it (hipBLASLt, with TunableOp)
 * reach a far smaller share of the spec-sheet TFLOPS than cuBLAS reaches of an NVIDIA board's. The matmul efficiency
 * rigfit fits describes NVIDIA's GEMMs, most of its rows on the A100; an Instinct keeps the share of it that its
 * measured best GEMM keeps of the A100's (`MAMF_SHARE`, mamf.ts). A published kernel measurement, not a fit to
 * tokens/s rows: the only published AMD training row (`torch-mojo-backend.jsonl`, one source) could not check a
 * fitted constant held out. Instincts the table has not measured (MI250X, MI210, MI300A) and Radeon cards keep the
 * whole efficiency, for want of a figure.
 */
const MEASURED_INSTINCTS = [
  { pattern: /\bMI355X\b/i, share: MAMF_SHARE.mi355x },
  { pattern: /\bMI325X\b/i, share: MAMF_SHARE.mi325x },
  { pattern: /\bMI300X\b/i, share: MAMF_SHARE.mi300x },
] as const

/** Share of the fitted matmul efficiency an AMD Instinct sustains (1 for any other device, or an unmeasured one). */
export function rocmSustainedShare(device: Pick<EstimateDevice, 'kind' | 'name'>): number {
  if (device.kind !== 'rocm') return 1
  const measured = MEASURED_INSTINCTS.find((entry) => entry.pattern.test(device.name))
  return measured ? shareAgainstA100(measured.share) : 1
}
