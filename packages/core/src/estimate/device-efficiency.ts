import { computeCapabilityNumber } from '../device/capabilities.js'
import type { EstimateDevice } from '../schemas/index.js'
import { rocmSustainedShare } from './rocm-efficiency.js'

/**
 * Share of the matmul efficiency a device sustains, against the spec-sheet peak it is priced at. The dense peaks
 * are quoted at the boost clock; a Hopper board (H100, H200: compute capability 9.x) trains at its 700 W power limit,
 * where the clock falls below the boost and its GEMMs keep a smaller share of the quoted 989 TFLOPS than an A100
 * keeps of its 312. `hopperShare` is fitted (`fitTuning`) to the Hopper tokens/s rows of two sources: rigfit's H100
 * calibration and llm-foundry's H100 tables. An AMD Instinct keeps the share its measured GEMMs give it
 * (`rocm-efficiency.ts`); every other device keeps the whole efficiency.
 */
export function sustainedPeakShare(
  device: Pick<EstimateDevice, 'kind' | 'computeCapability' | 'name'>,
  hopperShare: number,
): number {
  return isHopper(device) ? hopperShare : rocmSustainedShare(device)
}

export function isHopper(device: Pick<EstimateDevice, 'kind' | 'computeCapability'>): boolean {
  if (device.kind !== 'cuda') return false
  const cc = computeCapabilityNumber(device.computeCapability)
  return cc >= 9 && cc < 10
}
