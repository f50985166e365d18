import {
  type Gpu,
  type GpuCatalogEntry,
  type GpuMatch,
  HardwareProfile,
  matchGpu,
  RigfitError,
  unknownGpuError,
} from '@rigfit/core'
import { formatBytes } from './format.js'
import { appleWorkingSetBytes } from './gpu/apple.js'
import { gpuFromCatalog } from './gpu/enrich.js'
import { gpuVariantChange } from './gpu-variant.js'
import { linkedAs } from './interconnect-override.js'
import { osReserveBytes } from './memory-reserve.js'
import {
  assumedHostRamGiB,
  assumedRamChange,
  catalogInterconnect,
  isAppleSoc,
  macCpu,
  macHost,
  whatIfCpu,
} from './what-if-host.js'

const GIB = 1024 ** 3

/**
 * Corrections for wrong detection, or hardware to plan for: `--vram`, `--ram`, `--gpu NAME --gpus N`, `--cpus N`.
 */
export interface ProfileOverrides {
  vramGiB?: number
  ramGiB?: number
  gpu?: GpuCatalogEntry | string
  gpus?: number
  /** Logical CPUs of the planned node. */
  cpus?: number
  /** Physical cores behind `cpus` when known (a cloud preset); otherwise two threads per core are assumed. */
  physicalCores?: number
  /** The link of the planned node's GPUs (nvlink, pcie), or the network between its nodes (infiniband). */
  interconnect?: 'nvlink' | 'pcie' | 'infiniband'
}

export function hasOverrides(overrides: ProfileOverrides): boolean {
  return (
    overrides.vramGiB !== undefined ||
    overrides.ramGiB !== undefined ||
    overrides.gpu !== undefined ||
    overrides.gpus !== undefined ||
    overrides.cpus !== undefined ||
    overrides.interconnect !== undefined
  )
}

function requirePositive(value: number | undefined, flag: string, integer = false): void {
  if (value === undefined) return
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new RigfitError(
      'usage',
      'E_OVERRIDE',
      `--${flag} must be a positive ${integer ? 'whole number' : 'number'}, got ${value}.`,
      {
        suggestion: integer ? `For example --${flag} 2.` : `For example --${flag} 24 (GiB).`,
      },
    )
  }
}

/** The catalog entry for a GPU name, or a RigfitError that suggests the closest names. */
export function resolveCatalogGpu(
  query: string,
  catalog: GpuCatalogEntry[],
  vramBytes: number | null = null,
): GpuCatalogEntry {
  return resolveCatalogGpuMatch(query, catalog, vramBytes).entry
}

/** Like resolveCatalogGpu, with the other variants the name fits as well (then the entry was assumed). */
export function resolveCatalogGpuMatch(
  query: string,
  catalog: GpuCatalogEntry[],
  vramBytes: number | null = null,
): GpuMatch {
  const match = matchGpu(query, vramBytes, catalog)
  if (match) return match
  throw unknownGpuError(query, catalog, { flag: '--gpu' })
}

const NO_BATTERY = { batteryPresent: false, onBattery: false, acOnline: null, percent: null } as const
const UNKNOWN_THERMAL = { cpuTempC: null, throttlingRisk: 'unknown' } as const

/** The parts of a what-if node that are not this machine's: no container limits of ours, no disks. */
function anotherNode(host: HardwareProfile['host']): Pick<HardwareProfile, 'host' | 'storage'> {
  return {
    host: {
      ...host,
      container: { detected: false, memoryLimitBytes: null, cpuQuotaCores: null, cgroupVersion: null },
    },
    storage: [],
  }
}

/**
 * A profile changed by overrides: `gpu` (a catalog entry or name) replaces the GPUs with `gpus` copies of it
 * (default 1); `gpus` alone copies the first detected GPU; `vramGiB` sets every GPU's memory; `ramGiB` the
 * RAM; `cpus` the CPU count. When the GPUs are what-if, so is the node around them: the interconnect comes from
 * the catalog entry (SXM parts: NVLink) and the CPU from `cpus` or a stated assumption, never this machine's; an
 * Apple chip makes the node that Mac (its RAM is the unified memory, its own CPU cores, Metal/MPS). The result
 * says `source: 'what-if'` and lists each change in `overrides`.
 */
export function applyOverrides(
  profile: HardwareProfile,
  overrides: ProfileOverrides,
  catalog: GpuCatalogEntry[] = [],
): HardwareProfile {
  requirePositive(overrides.vramGiB, 'vram')
  requirePositive(overrides.ramGiB, 'ram')
  requirePositive(overrides.gpus, 'gpus', true)
  requirePositive(overrides.cpus, 'cpus', true)
  if (!hasOverrides(overrides)) return profile
  const changes: string[] = []
  const notes: string[] = []
  let gpus = profile.gpus.map((gpu) => ({ ...gpu }))
  let interconnect = profile.interconnect
  /** The catalog entry of what-if GPUs; null when the GPUs are the detected ones. */
  let whatIf: { entry: GpuCatalogEntry | null; count: number } | null = null

  if (overrides.gpu !== undefined) {
    const vramHint = overrides.vramGiB === undefined ? null : Math.round(overrides.vramGiB * GIB)
    const match =
      typeof overrides.gpu === 'string'
        ? resolveCatalogGpuMatch(overrides.gpu, catalog, vramHint)
        : { entry: overrides.gpu, alternatives: [] }
    const entry = match.entry
    const count = overrides.gpus ?? 1
    if (isAppleSoc(entry) && count > 1) {
      throw new RigfitError('usage', 'E_OVERRIDE', `--gpus ${count}: a Mac has one ${entry.name}.`, {
        suggestion: `Drop --gpus to plan for one Mac with ${entry.name} (Macs cannot train one model together: mps has no distributed backend).`,
      })
    }
    gpus = Array.from({ length: count }, (_, index) => gpuFromCatalog(entry, index))
    whatIf = { entry, count }
    interconnect = catalogInterconnect(entry, count)
    changes.push(`gpu=${entry.name} (${entry.id})`, `gpus=${count}`)
    if (match.alternatives.length > 0 && typeof overrides.gpu === 'string') {
      changes.push(gpuVariantChange(overrides.gpu, entry, match.alternatives))
    }
    notes.push(`What-if: ${count} × ${entry.name} from the GPU catalog, not detected on this machine.`)
  } else if (overrides.gpus !== undefined) {
    const template = gpus.find((gpu) => !gpu.integrated) ?? gpus[0]
    if (!template) {
      throw new RigfitError(
        'usage',
        'E_OVERRIDE',
        '--gpus copies the detected GPU, but this profile has none.',
        {
          suggestion: 'Name the GPU too: --gpu "RTX 3060 12GB" --gpus 2.',
        },
      )
    }
    if (template.vendor === 'apple' && template.unifiedMemory && overrides.gpus > 1) {
      throw new RigfitError(
        'usage',
        'E_OVERRIDE',
        `--gpus ${overrides.gpus}: a Mac has one ${template.name}.`,
        {
          suggestion: 'Drop --gpus: a Mac trains alone (mps has no distributed backend).',
        },
      )
    }
    const detectedCount = gpus.filter((gpu) => gpu.name === template.name).length
    gpus = Array.from({ length: overrides.gpus }, (_, index) => ({
      ...template,
      index,
      uuid: index === 0 ? template.uuid : null,
      busId: null,
    }))
    if (overrides.gpus !== detectedCount) {
      const entry = catalog.find((candidate) => candidate.id === template.catalog?.id) ?? null
      whatIf = { entry, count: overrides.gpus }
      interconnect = entry
        ? catalogInterconnect(entry, overrides.gpus)
        : { kind: overrides.gpus > 1 ? 'unknown' : 'none', links: [] }
    }
    changes.push(`gpus=${overrides.gpus}`)
    notes.push(`What-if: ${overrides.gpus} × ${template.name}.`)
  }

  if (overrides.interconnect !== undefined) {
    interconnect = linkedAs(interconnect, overrides.interconnect, gpus)
    changes.push(`interconnect=${overrides.interconnect}`)
  }

  const mac = whatIf?.entry && isAppleSoc(whatIf.entry) ? whatIf.entry : null
  // A what-if Mac's RAM is its unified memory: --ram, else the chip's largest memory option (the catalog's). Other
  // what-if GPUs sit in a node whose RAM is assumed from their memory, never this machine's.
  const assumedRam =
    whatIf?.entry && !mac && overrides.ramGiB === undefined
      ? assumedHostRamGiB(whatIf.entry.vramGB / (whatIf.entry.devicesPerBoard ?? 1), whatIf.count)
      : undefined
  const ramGiB = overrides.ramGiB ?? (mac ? mac.vramGB : assumedRam)
  let memory = profile.memory
  if (ramGiB !== undefined) {
    const total = Math.round(ramGiB * GIB)
    const reserve = osReserveBytes(total)
    memory = {
      ...memory,
      totalBytes: total,
      availableBytes: total - reserve,
      osReserveBytes: reserve,
      usableBytes: total - reserve,
      limitedBy: 'host',
      ...(mac ? { swap: { totalBytes: 0, deviceKind: 'none' as const }, bandwidthGBs: null } : {}),
    }
    changes.push(assumedRam === undefined ? `ram=${ramGiB}GiB` : assumedRamChange(ramGiB))
    if (assumedRam !== undefined) {
      notes.push(
        `RAM of the planned node assumed, not this machine's: ${ramGiB} GiB (twice the GPUs' memory, at least 32 GiB). Offload and the data cache follow it: pass --ram GiB with the real size.`,
      )
    }
    gpus = gpus.map((gpu) =>
      gpu.vendor === 'apple' && gpu.unifiedMemory
        ? withVram(gpu, appleWorkingSetBytes(total, {}).bytes)
        : gpu,
    )
    if (mac) {
      const workingSet = appleWorkingSetBytes(total, {}).bytes
      notes.push(
        `What-if Mac: ${formatBytes(total)} of unified memory (${overrides.ramGiB === undefined ? `the largest ${mac.name} offers; --ram sets the Mac's` : 'as given'}), of which the GPU may use its Metal working set, ${formatBytes(workingSet)} (${total <= 36 * GIB ? '2/3' : '3/4'} of RAM, macOS's default recommendedMaxWorkingSetSize).`,
      )
    }
  }

  let cpu = profile.cpu
  if (whatIf !== null || overrides.cpus !== undefined) {
    const planned =
      whatIf === null
        ? sameCpuScaled(profile.cpu, overrides.cpus as number, overrides.physicalCores)
        : whatIfCpu(whatIf.entry, whatIf.count, overrides.cpus, overrides.physicalCores)
    cpu = {
      ...profile.cpu,
      ...(whatIf === null ? {} : { brand: 'unknown (planned node)', baseGHz: null, boostGHz: null }),
      ...(mac ? macCpu(mac) : {}),
      physicalCores: planned.physical,
      logicalCores: planned.logical,
      usableCores: planned.logical,
    }
    changes.push(planned.change)
    notes.push(planned.note)
  }

  if (overrides.vramGiB !== undefined) {
    if (gpus.length === 0) {
      throw new RigfitError(
        'usage',
        'E_OVERRIDE',
        '--vram sets the memory of the GPUs, but this profile has none.',
        {
          suggestion: 'Add a GPU: --gpu "RTX 3060 12GB" (and --gpus N for several).',
        },
      )
    }
    gpus = gpus.map((gpu) => withVram(gpu, Math.round((overrides.vramGiB as number) * GIB)))
    changes.push(`vram=${overrides.vramGiB}GiB`)
    notes.push(`VRAM set to ${formatBytes(Math.round(overrides.vramGiB * GIB))} per GPU by override.`)
  }

  const oldGpuWatts = sumWatts(profile.gpus)
  const cpuWatts =
    profile.power.tdpBudgetWatts === null ? null : Math.max(0, profile.power.tdpBudgetWatts - oldGpuWatts)
  const gpuWatts = sumWatts(gpus)
  return HardwareProfile.parse({
    ...profile,
    source: 'what-if',
    overrides: [...profile.overrides, ...changes],
    ...(mac ? macHost(profile) : {}),
    cpu,
    memory,
    gpus,
    interconnect,
    // Another GPU is another node: its disks, container limits, battery and temperatures are not this machine's,
    // and the plan does not guess them.
    ...(overrides.gpu === undefined ? {} : anotherNode(mac ? macHost(profile).host : profile.host)),
    power: {
      ...profile.power,
      ...(overrides.gpu === undefined ? {} : NO_BATTERY),
      tdpBudgetWatts: cpuWatts === null && gpuWatts === 0 ? null : (cpuWatts ?? 0) + gpuWatts,
    },
    thermal: {
      ...(overrides.gpu === undefined ? profile.thermal : UNKNOWN_THERMAL),
      gpuTempsC: gpus.map((gpu) => gpu.temperatureC),
    },
    notes: [...profile.notes.filter((note) => !note.startsWith('No GPU found')), ...notes],
  })
}

/** `--cpus` on the detected machine: its CPU with another count, keeping its threads-per-core ratio. */
function sameCpuScaled(
  cpu: HardwareProfile['cpu'],
  cpus: number,
  physicalCores: number | undefined,
): { logical: number; physical: number; change: string; note: string } {
  const ratio = cpu.logicalCores > 0 ? cpu.physicalCores / cpu.logicalCores : 1
  const physical = physicalCores ?? Math.max(1, Math.round(cpus * ratio))
  return {
    logical: cpus,
    physical,
    change: `cpus=${cpus}`,
    note: `CPU count set to ${cpus} logical CPUs (${physical} cores) by override.`,
  }
}

function withVram(gpu: Gpu, bytes: number): Gpu {
  return { ...gpu, vramTotalBytes: bytes, vramUsableBytes: bytes, vramFreeBytes: null }
}

function sumWatts(gpus: Gpu[]): number {
  return gpus.reduce((sum, gpu) => sum + (gpu.powerLimitWatts ?? gpu.tdpWatts ?? 0), 0)
}
