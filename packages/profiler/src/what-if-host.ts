import type { GpuCatalogEntry, HardwareProfile } from '@rigfit/core'

/**
 * The parts of a what-if machine that are not its GPUs: how its GPUs are linked, and the CPU that feeds them when
 * nobody said (`--cpus`, `--instance`). They describe the planned node, never the machine rigfit runs on.
 */

/** Logical CPUs assumed per GPU of a what-if node: cloud GPU nodes provision 12 (p4d.24xlarge: 96 for 8 A100s, g5.12xlarge: 48 for 4 A10Gs). */
export const ASSUMED_CPUS_PER_GPU = 12
/** At least a desktop's 8 cores / 16 threads, the host of a one- or two-GPU workstation. */
export const ASSUMED_MIN_CPUS = 16

/** Marks the override entry of a CPU count that was assumed rather than given. */
const ASSUMED_MARK = ' (assumed)'

/**
 * The link between copies of a catalog GPU in one node, read from the catalog entry: SXM boards (and the B200,
 * sold only as an SXM module) sit on NVLink/NVSwitch; the OAM Instinct modules (MI250X, MI300X) on Infinity
 * Fabric (xGMI); every other card on PCIe.
 */
export function catalogInterconnect(entry: GpuCatalogEntry, count: number): HardwareProfile['interconnect'] {
  if (count < 2) return { kind: 'none', links: [] }
  const names = [entry.id, entry.name, ...entry.aliases].join(' ')
  if (entry.vendor === 'nvidia' && (/sxm/i.test(names) || SXM_ONLY.has(entry.id))) {
    return { kind: 'nvlink', links: [] }
  }
  if (entry.vendor === 'amd' && OAM_MODULES.has(entry.id)) return { kind: 'xgmi', links: [] }
  return { kind: 'pcie', links: [] }
}

/** Catalog ids of NVIDIA parts that only exist as SXM modules although their name does not say so. */
const SXM_ONLY = new Set(['b200'])
/** Catalog ids of AMD Instinct parts built as OAM modules on Infinity Fabric. */
const OAM_MODULES = new Set(['mi250x', 'mi300x'])

/**
 * CPU cores of each Apple chip in the catalog, in the configuration that has the catalog's GPU (Apple's Mac tech
 * specs: M1 8-core; M1 Pro 16-core GPU and M1 Max 10-core; M2 8-core; M2 Pro 19-core GPU and M2 Max 12-core;
 * M3 8-core; M3 Pro 18-core GPU 12-core; M3 Max 30-core GPU 14-core, 40-core GPU 16-core; M4 10-core; M4 Pro
 * 20-core GPU 14-core; M4 Max 32-core GPU 14-core, 40-core GPU 16-core). Apple cores run one thread each.
 */
const APPLE_CPU_CORES: Record<string, number> = {
  'm1-8c': 8,
  'm1-pro-16c': 10,
  'm1-max-32c': 10,
  'm2-10c': 8,
  'm2-pro-19c': 12,
  'm2-max-38c': 12,
  'm3-10c': 8,
  'm3-pro-18c': 12,
  'm3-max-30c': 14,
  'm3-max-40c': 16,
  'm4-10c': 10,
  'm4-pro-20c': 14,
  'm4-max-32c': 14,
  'm4-max-40c': 16,
}
/** An Apple chip the table above does not know: the base chips' 8 cores. */
const APPLE_DEFAULT_CORES = 8

export function isAppleSoc(entry: GpuCatalogEntry): boolean {
  return entry.vendor === 'apple' && entry.unifiedMemory
}

export interface WhatIfCpu {
  logical: number
  physical: number
  /** The entry for `overrides`, e.g. `cpus=96 (assumed)`. */
  change: string
  /** The sentence for `notes` saying where the count came from. */
  note: string
}

/**
 * The CPU of a node whose GPUs are what-if: `cpus` when given (with `physicalCores` when known, else two
 * threads per core), else an Apple chip's own cores, else an assumption of ASSUMED_CPUS_PER_GPU per GPU, at
 * least ASSUMED_MIN_CPUS, stated in the note so a user knows to pass `--cpus`.
 */
export function whatIfCpu(
  entry: GpuCatalogEntry | null,
  gpus: number,
  cpus: number | undefined,
  physicalCores: number | undefined,
): WhatIfCpu {
  const apple = entry !== null && isAppleSoc(entry)
  if (cpus !== undefined) {
    const physical = physicalCores ?? (apple ? cpus : Math.max(1, Math.ceil(cpus / 2)))
    return {
      logical: cpus,
      physical,
      change: `cpus=${cpus}`,
      note: `CPU of the planned node: ${cpus} logical CPUs (${physical} cores), as given.`,
    }
  }
  if (apple) {
    const cores = APPLE_CPU_CORES[entry.id] ?? APPLE_DEFAULT_CORES
    return {
      logical: cores,
      physical: cores,
      change: `cpus=${cores}`,
      note: `CPU of the planned Mac: the ${cores}-core CPU of ${entry.name.replace(/ \(.*\)$/, '')} (Apple's tech specs); --cpus N says otherwise.`,
    }
  }
  const logical = Math.max(ASSUMED_MIN_CPUS, ASSUMED_CPUS_PER_GPU * gpus)
  return {
    logical,
    physical: logical / 2,
    change: `cpus=${logical}${ASSUMED_MARK}`,
    note: `CPU of the planned node assumed, not this machine's: ${logical} logical CPUs (${logical / 2} cores), ${gpus > 0 ? `${ASSUMED_CPUS_PER_GPU} per GPU as on cloud GPU nodes, at least ${ASSUMED_MIN_CPUS}` : "a desktop's"}. Threads and dataloader workers follow it: pass --cpus N with the real count.`,
  }
}

/** The CPU count a what-if profile assumed (rather than was given), or null: plans warn about it. */
export function assumedCpuCount(profile: HardwareProfile): number | null {
  const entry = [...profile.overrides].reverse().find((change) => change.startsWith('cpus='))
  if (!entry?.endsWith(ASSUMED_MARK)) return null
  return Number.parseInt(entry.slice('cpus='.length), 10)
}

/** The CPU of a what-if Mac: the chip's own Arm cores. */
export function macCpu(entry: GpuCatalogEntry): Partial<HardwareProfile['cpu']> {
  return {
    vendor: 'apple',
    brand: `${entry.name.replace(/ \(.*\)$/, '')} CPU`,
    arch: 'arm64',
    flags: { avx2: false, avx512: false, avx512bf16: false, amx: false, fma: false, neon: true },
    numaNodes: 1,
  }
}

/** The host of a what-if Mac: macOS on arm64 with Metal and PyTorch's MPS backend, not this machine's OS. */
export function macHost(profile: HardwareProfile): Pick<HardwareProfile, 'host' | 'acceleration'> {
  return {
    host: {
      ...profile.host,
      hostname: 'what-if',
      platform: 'darwin',
      distro: 'macOS',
      release: 'unknown',
      kernel: 'unknown',
      arch: 'arm64',
      virtualized: false,
      container: { detected: false, memoryLimitBytes: null, cpuQuotaCores: null, cgroupVersion: null },
    },
    acceleration: { cuda: null, rocm: null, metal: true, mps: true, opencl: null, xpu: false },
  }
}

/**
 * RAM of a what-if node of GPUs when --ram does not say: twice their memory rounded up to a power of two, at least
 * 32 GiB (the host RAM of typical workstations and cloud nodes for such GPUs), never this machine's.
 */
export function assumedHostRamGiB(vramGiBPerGpu: number, gpus: number): number {
  return Math.max(32, 2 ** Math.ceil(Math.log2(Math.max(1, 2 * vramGiBPerGpu * gpus))))
}

/** The `ram=` change of an assumed RAM, which plans warn about. */
export function assumedRamChange(ramGiB: number): string {
  return `ram=${ramGiB}GiB${ASSUMED_MARK}`
}

/** The RAM a what-if profile assumed (rather than was given) in GiB, or null. */
export function assumedRamGiB(profile: HardwareProfile): number | null {
  const entry = [...profile.overrides].reverse().find((change) => change.startsWith('ram='))
  if (!entry?.endsWith(ASSUMED_MARK)) return null
  return Number.parseFloat(entry.slice('ram='.length))
}
