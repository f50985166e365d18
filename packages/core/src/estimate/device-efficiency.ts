import { computeCapabilityNumber } from '../device/capabilities.js'
import type { EstimateDevice, Precision } from '../schemas/index.js'
import { mpsSustainedShare } from './mps-efficiency.js'
import { nvidiaSustainedShare } from './nvidia-sustained-share.js'
import { rocmSustainedShare } from './rocm-efficiency.js'

/**
 * Share of the matmul efficiency a device sustains, against the spec-sheet peak it is priced at. The dense peaks
 * are quoted at the boost clock; a Hopper board (H100, H200: compute capability 9.x) trains at its 700 W power limit,
 * where the clock falls below the boost and its GEMMs keep a smaller share of the quoted 989 TFLOPS than an A100
 * keeps of its 312. `hopperShare` is fitted (`fitTuning`) to the Hopper tokens/s rows of two sources: rigfit's H100
 * calibration and llm-foundry's H100 tables. An AMD Instinct keeps the share its measured GEMMs give it
 * (`rocm-efficiency.ts`), as do a power-capped T4 and the Blackwell datacenter GPUs (`nvidia-sustained-share.ts`)
 * and an Apple GPU under MPS (`mps-efficiency.ts`, by the precision it multiplies in); every other device keeps the
 * whole efficiency.
 */
export function sustainedPeakShare(
  device: Pick<EstimateDevice, 'kind' | 'computeCapability' | 'name'>,
  hopperShare: number,
  precision: Precision,
): number {
  if (isHopper(device)) return hopperShare
  return (
    nvidiaSustainedShare(device, hopperShare) *
    rocmSustainedShare(device) *
    mpsSustainedShare(device, precision)
  )
}

export function isHopper(device: Pick<EstimateDevice, 'kind' | 'computeCapability'>): boolean {
  if (device.kind !== 'cuda') return false
  const cc = computeCapabilityNumber(device.computeCapability)
  return cc >= 9 && cc < 10
}
