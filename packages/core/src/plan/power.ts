/**
 * Power draw and energy. A training step keeps the accelerators near the mode's share of their TDP (capped by
 * the configured power limit); the host adds the CPU package at a share of its own TDP, estimated from cores
 * when unknown (about 10 W per physical core, 65 W at least for a desktop-class package).
 */
export interface PowerInput {
  deviceTdpWatts: number[]
  devicePowerLimitWatts: (number | null)[]
  tdpFraction: number
  physicalCores: number
  cpuOnly: boolean
  hours: number
  psuWatts: number | null
}

export interface PowerEstimate {
  watts: number
  tdpFraction: number
  energyKWh: number
  psuHeadroomWatts: number | null
}

const WATTS_PER_CORE = 10
const MIN_CPU_PACKAGE_WATTS = 15
/** Board, memory, fans and drives that a PSU also feeds. */
const PLATFORM_WATTS = 50

export function estimateCpuPackageWatts(physicalCores: number): number {
  return Math.max(MIN_CPU_PACKAGE_WATTS, physicalCores * WATTS_PER_CORE)
}

export function estimatePower(input: PowerInput): PowerEstimate {
  const deviceWatts = input.deviceTdpWatts.reduce((sum, tdp, i) => {
    const limit = input.devicePowerLimitWatts[i] ?? tdp
    return sum + Math.min(tdp * input.tdpFraction, limit)
  }, 0)
  const cpuPackage = estimateCpuPackageWatts(input.physicalCores)
  // Feeding GPUs costs the CPU a fraction of its package; CPU-only training runs it at the mode's share.
  const cpuWatts = cpuPackage * (input.cpuOnly ? input.tdpFraction : 0.3)
  const watts = Math.round(deviceWatts + cpuWatts)
  const fullTdp = input.deviceTdpWatts.reduce((a, b) => a + b, 0) + cpuPackage
  const peakDraw = input.deviceTdpWatts.reduce((a, b) => a + b, 0) + cpuPackage + PLATFORM_WATTS
  return {
    watts,
    tdpFraction: fullTdp > 0 ? watts / fullTdp : 0,
    energyKWh: (watts * input.hours) / 1000,
    psuHeadroomWatts: input.psuWatts === null ? null : Math.round(input.psuWatts - peakDraw),
  }
}
