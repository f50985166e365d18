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
  const log: OverrideLog = { changes: [], notes: [] }
  const devices = overriddenGpus(profile, overrides, catalog, log)
  const { whatIf } = devices
  const mac = whatIf?.entry && isAppleSoc(whatIf.entry) ? whatIf.entry : null
  const host = overriddenMemory(profile.memory, overrides, devices, mac, log)
  const cpu = overriddenCpu(profile.cpu, overrides, whatIf, mac, log)
  const gpus = overriddenVram(host.gpus, overrides.vramGiB, log)
  return whatIfNode(
    profile,
    overrides,
    { mac, cpu, memory: host.memory, gpus, interconnect: devices.interconnect },
    log,
  )
}

/** What an override changed, for the profile's `overrides`, and what it assumed, for its `notes`. */
interface OverrideLog {
  changes: string[]
  notes: string[]
}

/** The catalog entry of what-if GPUs (null when not in a catalog) and their count. */
type WhatIfGpus = { entry: GpuCatalogEntry | null; count: number }

/** The GPUs and their link after `--gpu`, `--gpus` and `--interconnect`; `whatIf` is null for the detected ones. */
function overriddenGpus(
  profile: HardwareProfile,
  overrides: ProfileOverrides,
  catalog: GpuCatalogEntry[],
  log: OverrideLog,
): { gpus: Gpu[]; interconnect: HardwareProfile['interconnect']; whatIf: WhatIfGpus | null } {
  let devices: { gpus: Gpu[]; interconnect: HardwareProfile['interconnect']; whatIf: WhatIfGpus | null } = {
    gpus: profile.gpus.map((gpu) => ({ ...gpu })),
    interconnect: profile.interconnect,
    whatIf: null,
  }
  if (overrides.gpu !== undefined) devices = catalogGpus(overrides.gpu, overrides, catalog, log)
  else if (overrides.gpus !== undefined) devices = copiedGpus(devices, overrides.gpus, catalog, log)
  if (overrides.interconnect !== undefined) {
    devices.interconnect = linkedAs(devices.interconnect, overrides.interconnect, devices.gpus)
    log.changes.push(`interconnect=${overrides.interconnect}`)
  }
  return devices
}

/** `--gpu NAME [--gpus N]`: N copies of the catalog entry, linked as the catalog says. */
function catalogGpus(
  gpu: GpuCatalogEntry | string,
  overrides: ProfileOverrides,
  catalog: GpuCatalogEntry[],
  log: OverrideLog,
) {
  const vramHint = overrides.vramGiB === undefined ? null : Math.round(overrides.vramGiB * GIB)
  const match =
    typeof gpu === 'string'
      ? resolveCatalogGpuMatch(gpu, catalog, vramHint)
      : { entry: gpu, alternatives: [] }
  const entry = match.entry
  const count = overrides.gpus ?? 1
  if (isAppleSoc(entry) && count > 1) {
    throw new RigfitError('usage', 'E_OVERRIDE', `--gpus ${count}: a Mac has one ${entry.name}.`, {
      suggestion: `Drop --gpus to plan for one Mac with ${entry.name} (Macs cannot train one model together: mps has no distributed backend).`,
    })
  }
  log.changes.push(`gpu=${entry.name} (${entry.id})`, `gpus=${count}`)
  if (match.alternatives.length > 0 && typeof gpu === 'string') {
    log.changes.push(gpuVariantChange(gpu, entry, match.alternatives))
  }
  log.notes.push(`What-if: ${count} × ${entry.name} from the GPU catalog, not detected on this machine.`)
  return {
    gpus: Array.from({ length: count }, (_, index) => gpuFromCatalog(entry, index)),
    interconnect: catalogInterconnect(entry, count),
    whatIf: { entry, count },
  }
}

/** `--gpus N` alone: N copies of the detected GPU; another count than detected makes them what-if. */
function copiedGpus(
  detected: { gpus: Gpu[]; interconnect: HardwareProfile['interconnect'] },
  count: number,
  catalog: GpuCatalogEntry[],
  log: OverrideLog,
) {
  const template = detected.gpus.find((gpu) => !gpu.integrated) ?? detected.gpus[0]
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
  if (template.vendor === 'apple' && template.unifiedMemory && count > 1) {
    throw new RigfitError('usage', 'E_OVERRIDE', `--gpus ${count}: a Mac has one ${template.name}.`, {
      suggestion: 'Drop --gpus: a Mac trains alone (mps has no distributed backend).',
    })
  }
  const detectedCount = detected.gpus.filter((gpu) => gpu.name === template.name).length
  const gpus = Array.from({ length: count }, (_, index) => ({
    ...template,
    index,
    uuid: index === 0 ? template.uuid : null,
    busId: null,
  }))
  let interconnect = detected.interconnect
  let whatIf: WhatIfGpus | null = null
  if (count !== detectedCount) {
    const entry = catalog.find((candidate) => candidate.id === template.catalog?.id) ?? null
    whatIf = { entry, count }
    interconnect = entry
      ? catalogInterconnect(entry, count)
      : { kind: count > 1 ? 'unknown' : 'none', links: [] }
  }
  log.changes.push(`gpus=${count}`)
  log.notes.push(`What-if: ${count} × ${template.name}.`)
  return { gpus, interconnect, whatIf }
}

/**
 * The RAM of the node: `--ram`, a what-if Mac's unified memory, or assumed for other what-if GPUs; an Apple GPU's
 * memory follows it (its Metal working set).
 */
function overriddenMemory(
  detected: HardwareProfile['memory'],
  overrides: ProfileOverrides,
  devices: { gpus: Gpu[]; whatIf: WhatIfGpus | null },
  mac: GpuCatalogEntry | null,
  log: OverrideLog,
): { memory: HardwareProfile['memory']; gpus: Gpu[] } {
  const { whatIf } = devices
  // A what-if Mac's RAM is its unified memory: --ram, else the chip's largest memory option (the catalog's). Other
  // what-if GPUs sit in a node whose RAM is assumed from their memory, never this machine's.
  const assumedRam =
    whatIf?.entry && !mac && overrides.ramGiB === undefined
      ? assumedHostRamGiB(whatIf.entry.vramGB / (whatIf.entry.devicesPerBoard ?? 1), whatIf.count)
      : undefined
  const ramGiB = overrides.ramGiB ?? (mac ? mac.vramGB : assumedRam)
  if (ramGiB === undefined) return { memory: detected, gpus: devices.gpus }
  const total = Math.round(ramGiB * GIB)
  const reserve = osReserveBytes(total)
  const memory = {
    ...detected,
    totalBytes: total,
    availableBytes: total - reserve,
    osReserveBytes: reserve,
    usableBytes: total - reserve,
    limitedBy: 'host' as const,
    ...(mac ? { swap: { totalBytes: 0, deviceKind: 'none' as const }, bandwidthGBs: null } : {}),
  }
  log.changes.push(assumedRam === undefined ? `ram=${ramGiB}GiB` : assumedRamChange(ramGiB))
  if (assumedRam !== undefined) {
    log.notes.push(
      `RAM of the planned node assumed, not this machine's: ${ramGiB} GiB (twice the GPUs' memory, at least 32 GiB). Offload and the data cache follow it: pass --ram GiB with the real size.`,
    )
  }
  const gpus = devices.gpus.map((gpu) =>
    gpu.vendor === 'apple' && gpu.unifiedMemory ? withVram(gpu, appleWorkingSetBytes(total, {}).bytes) : gpu,
  )
  if (mac) {
    const workingSet = appleWorkingSetBytes(total, {}).bytes
    log.notes.push(
      `What-if Mac: ${formatBytes(total)} of unified memory (${overrides.ramGiB === undefined ? `the largest ${mac.name} offers; --ram sets the Mac's` : 'as given'}), of which the GPU may use its Metal working set, ${formatBytes(workingSet)} (${total <= 36 * GIB ? '2/3' : '3/4'} of RAM, macOS's default recommendedMaxWorkingSetSize).`,
    )
  }
  return { memory, gpus }
}

/** The CPU of the planned node: `--cpus` on this machine's CPU, or the what-if node's (a Mac's own). */
function overriddenCpu(
  detected: HardwareProfile['cpu'],
  overrides: ProfileOverrides,
  whatIf: WhatIfGpus | null,
  mac: GpuCatalogEntry | null,
  log: OverrideLog,
): HardwareProfile['cpu'] {
  if (whatIf === null && overrides.cpus === undefined) return detected
  const planned =
    whatIf === null
      ? sameCpuScaled(detected, overrides.cpus as number, overrides.physicalCores)
      : whatIfCpu(whatIf.entry, whatIf.count, overrides.cpus, overrides.physicalCores)
  log.changes.push(planned.change)
  log.notes.push(planned.note)
  return {
    ...detected,
    ...(whatIf === null ? {} : { brand: 'unknown (planned node)', baseGHz: null, boostGHz: null }),
    ...(mac ? macCpu(mac) : {}),
    physicalCores: planned.physical,
    logicalCores: planned.logical,
    usableCores: planned.logical,
  }
}

/** `--vram`: every GPU's memory. */
function overriddenVram(gpus: Gpu[], vramGiB: number | undefined, log: OverrideLog): Gpu[] {
  if (vramGiB === undefined) return gpus
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
  log.changes.push(`vram=${vramGiB}GiB`)
  log.notes.push(`VRAM set to ${formatBytes(Math.round(vramGiB * GIB))} per GPU by override.`)
  return gpus.map((gpu) => withVram(gpu, Math.round(vramGiB * GIB)))
}

/** The what-if profile: the overridden parts, and for another GPU another node (power, thermals, host). */
function whatIfNode(
  profile: HardwareProfile,
  overrides: ProfileOverrides,
  node: {
    mac: GpuCatalogEntry | null
    cpu: HardwareProfile['cpu']
    memory: HardwareProfile['memory']
    gpus: Gpu[]
    interconnect: HardwareProfile['interconnect']
  },
  log: OverrideLog,
): HardwareProfile {
  const { mac, gpus } = node
  const oldGpuWatts = sumWatts(profile.gpus)
  const cpuWatts =
    profile.power.tdpBudgetWatts === null ? null : Math.max(0, profile.power.tdpBudgetWatts - oldGpuWatts)
  const gpuWatts = sumWatts(gpus)
  return HardwareProfile.parse({
    ...profile,
    source: 'what-if',
    overrides: [...profile.overrides, ...log.changes],
    ...(mac ? macHost(profile) : {}),
    cpu: node.cpu,
    memory: node.memory,
    gpus,
    interconnect: node.interconnect,
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
    notes: [...profile.notes.filter((note) => !note.startsWith('No GPU found')), ...log.notes],
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
