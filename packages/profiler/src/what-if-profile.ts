import {
  type GpuCatalogEntry,
  HARDWARE_PROFILE_SCHEMA_VERSION,
  type HardwareProfile,
  RIGFIT_VERSION,
  RigfitError,
} from '@rigfit/core'
import { osReserveBytes } from './memory-reserve.js'
import { applyOverrides, type ProfileOverrides, resolveCatalogGpu } from './overrides.js'
import { assumedHostRamGiB, isAppleSoc, whatIfCpu } from './what-if-host.js'

const GIB = 1024 ** 3

/**
 * A profile for hardware you do not have (`rigfit plan --gpu "RTX 3060 12GB" --gpus 2`). With `base` (this
 * machine's profile, or one loaded from a file) only the overridden parts change. Without it the host is an
 * assumption stated in `notes`: RAM of twice the total VRAM, at least 32 GiB (a typical workstation for such
 * GPUs) unless `ramGiB` says otherwise (a Mac: the chip's largest memory), and the CPU `applyOverrides` gives a
 * what-if node (16 logical CPUs without GPUs).
 */
export function whatIfProfile(
  overrides: ProfileOverrides,
  catalog: GpuCatalogEntry[],
  base?: HardwareProfile,
): HardwareProfile {
  if (base) return applyOverrides(base, overrides, catalog)
  if (overrides.gpu === undefined && overrides.ramGiB === undefined) {
    throw new RigfitError(
      'usage',
      'E_OVERRIDE',
      'A what-if profile without a machine needs --gpu NAME or --ram GiB.',
      {
        suggestion: 'For example --gpu "RTX 3060 12GB" --gpus 2.',
      },
    )
  }
  const entry = typeof overrides.gpu === 'string' ? resolveCatalogGpu(overrides.gpu, catalog) : overrides.gpu
  const mac = entry !== undefined && isAppleSoc(entry)
  const vramGiB = overrides.vramGiB ?? (entry ? entry.vramGB / (entry.devicesPerBoard ?? 1) : 0)
  const ramGiB =
    overrides.ramGiB ?? (entry && mac ? entry.vramGB : assumedHostRamGiB(vramGiB, overrides.gpus ?? 1))
  const hostCpu = whatIfCpu(null, 0, undefined, undefined)
  const cpuAssumed = !entry && overrides.cpus === undefined
  const blank = assumedHost(Math.round(ramGiB * GIB), hostCpu, {
    overrides: cpuAssumed ? [hostCpu.change] : [],
    notes: [
      ...(mac || overrides.ramGiB === undefined ? [] : [`Host: ${ramGiB} GiB RAM (as given).`]),
      ...(cpuAssumed ? [hostCpu.note] : []),
    ],
  })
  return applyOverrides(
    blank,
    // An assumed RAM is applyOverrides' to make (and to mark as assumed): only a given one is passed on.
    { ...overrides, ...(entry ? { gpu: entry } : {}) },
    catalog,
  )
}

/** A host nothing is known of but its RAM and assumed CPU: no GPUs, disks, network or battery. */
function assumedHost(
  total: number,
  hostCpu: { physical: number; logical: number },
  said: { overrides: string[]; notes: string[] },
): HardwareProfile {
  const reserve = osReserveBytes(total)
  return {
    schemaVersion: HARDWARE_PROFILE_SCHEMA_VERSION,
    createdAt: new Date().toISOString(),
    rigfitVersion: RIGFIT_VERSION,
    source: 'what-if',
    overrides: said.overrides,
    host: {
      hostname: 'what-if',
      platform: 'unknown',
      distro: 'unknown',
      release: 'unknown',
      kernel: 'unknown',
      arch: 'unknown',
      virtualized: null,
      container: { detected: false, memoryLimitBytes: null, cpuQuotaCores: null, cgroupVersion: null },
    },
    cpu: {
      vendor: 'unknown',
      brand: 'unknown (assumed host)',
      arch: 'unknown',
      physicalCores: hostCpu.physical,
      logicalCores: hostCpu.logical,
      usableCores: hostCpu.logical,
      baseGHz: null,
      boostGHz: null,
      flags: { avx2: false, avx512: false, avx512bf16: false, amx: false, fma: false, neon: false },
      numaNodes: 1,
      temperatureC: null,
    },
    memory: {
      totalBytes: total,
      availableBytes: total - reserve,
      osReserveBytes: reserve,
      usableBytes: total - reserve,
      limitedBy: 'host',
      swap: { totalBytes: 0, deviceKind: 'none' },
      bandwidthGBs: null,
    },
    gpus: [],
    interconnect: { kind: 'none', links: [] },
    acceleration: { cuda: null, rocm: null, metal: false, mps: false, opencl: null, xpu: false },
    storage: [],
    network: { status: 'not-measured', downloadMbps: null, target: null },
    power: { batteryPresent: false, onBattery: false, acOnline: null, percent: null, tdpBudgetWatts: null },
    thermal: { cpuTempC: null, gpuTempsC: [], throttlingRisk: 'unknown' },
    benchmark: { ran: false, ms: null, notes: [] },
    notes: said.notes,
    probes: [],
  }
}
