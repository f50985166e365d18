import type { HardwareProfile } from '../schemas/hardware-profile.js'

/**
 * Peak fp32 TFLOPS of a CPU from its cores, clock and vector width: FMA units x lanes x 2 per cycle.
 * AVX-512: 2 FMA x 16 lanes; AVX2: 2 x 8; NEON: 2-4 x 4 (Apple M cores: 4 x 4); otherwise 4 flops per cycle.
 */
export function cpuPeakTflops(cpu: HardwareProfile['cpu']): number {
  const ghz = cpu.boostGHz ?? cpu.baseGHz ?? 2.5
  const flopsPerCycle = cpu.flags.avx512 ? 64 : cpu.flags.avx2 ? 32 : cpu.flags.neon ? 32 : 4
  return (Math.min(cpu.physicalCores, cpu.usableCores) * ghz * flopsPerCycle) / 1000
}
