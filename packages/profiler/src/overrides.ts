import {
  type Gpu,
  type GpuCatalogEntry,
  HARDWARE_PROFILE_SCHEMA_VERSION,
  HardwareProfile,
  matchGpu,
  RIGFIT_VERSION,
  RigfitError,
} from '@rigfit/core'
import { formatBytes } from './format.js'
import { appleWorkingSetBytes } from './gpu/apple.js'
import { gpuFromCatalog } from './gpu/enrich.js'
import { osReserveBytes } from './memory-reserve.js'

const GIB = 1024 ** 3

/** Corrections for wrong detection, or hardware to plan for: `--vram`, `--ram`, `--gpu NAME --gpus N`. */
export interface ProfileOverrides {
  vramGiB?: number
  ramGiB?: number
  gpu?: GpuCatalogEntry | string
  gpus?: number
}

export function hasOverrides(overrides: ProfileOverrides): boolean {
  return (
    overrides.vramGiB !== undefined ||
    overrides.ramGiB !== undefined ||
    overrides.gpu !== undefined ||
    overrides.gpus !== undefined
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
  const match = matchGpu(query, vramBytes, catalog)
  if (match) return match.entry
  const words = query
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1)
  const close = catalog
    .map((entry) => ({
      entry,
      score: words.filter((word) => entry.name.toLowerCase().includes(word)).length,
    }))
    .filter((scored) => scored.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, 5)
    .map((scored) => `"${scored.entry.name}"`)
  throw new RigfitError(
    'input',
    'E_UNKNOWN_GPU',
    `No GPU named "${query}" in the catalog (${catalog.length} models known).`,
    {
      suggestion:
        close.length > 0
          ? `Did you mean ${close.join(', ')}?`
          : 'Name a GPU as its spec sheet does, e.g. "RTX 3060 12GB" or "A100 80GB".',
    },
  )
}

/**
 * A profile changed by overrides: `gpu` (a catalog entry or name) replaces the GPUs with `gpus` copies of it
 * (default 1); `gpus` alone copies the first detected GPU; `vramGiB` sets every GPU's memory; `ramGiB` the
 * RAM. The result says `source: 'what-if'` and lists each change in `overrides`.
 */
export function applyOverrides(
  profile: HardwareProfile,
  overrides: ProfileOverrides,
  catalog: GpuCatalogEntry[] = [],
): HardwareProfile {
  requirePositive(overrides.vramGiB, 'vram')
  requirePositive(overrides.ramGiB, 'ram')
  requirePositive(overrides.gpus, 'gpus', true)
  if (!hasOverrides(overrides)) return profile
  const changes: string[] = []
  const notes: string[] = []
  let gpus = profile.gpus.map((gpu) => ({ ...gpu }))
  let gpusChanged = false

  if (overrides.gpu !== undefined) {
    const vramHint = overrides.vramGiB === undefined ? null : Math.round(overrides.vramGiB * GIB)
    const entry =
      typeof overrides.gpu === 'string' ? resolveCatalogGpu(overrides.gpu, catalog, vramHint) : overrides.gpu
    const count = overrides.gpus ?? 1
    gpus = Array.from({ length: count }, (_, index) => gpuFromCatalog(entry, index))
    gpusChanged = true
    changes.push(`gpu=${entry.name} (${entry.id})`, `gpus=${count}`)
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
    gpus = Array.from({ length: overrides.gpus }, (_, index) => ({
      ...template,
      index,
      uuid: index === 0 ? template.uuid : null,
      busId: null,
    }))
    gpusChanged = true
    changes.push(`gpus=${overrides.gpus}`)
    notes.push(`What-if: ${overrides.gpus} × ${template.name}.`)
  }

  let memory = profile.memory
  if (overrides.ramGiB !== undefined) {
    const total = Math.round(overrides.ramGiB * GIB)
    const reserve = osReserveBytes(total)
    memory = {
      ...memory,
      totalBytes: total,
      availableBytes: total - reserve,
      osReserveBytes: reserve,
      usableBytes: total - reserve,
      limitedBy: 'host',
    }
    changes.push(`ram=${overrides.ramGiB}GiB`)
    gpus = gpus.map((gpu) =>
      gpu.vendor === 'apple' && gpu.unifiedMemory
        ? withVram(gpu, appleWorkingSetBytes(total, {}).bytes)
        : gpu,
    )
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
    memory,
    gpus,
    interconnect: gpusChanged
      ? { kind: gpus.length > 1 ? 'unknown' : 'none', links: [] }
      : profile.interconnect,
    power: {
      ...profile.power,
      tdpBudgetWatts: cpuWatts === null && gpuWatts === 0 ? null : (cpuWatts ?? 0) + gpuWatts,
    },
    thermal: { ...profile.thermal, gpuTempsC: gpus.map((gpu) => gpu.temperatureC) },
    notes: [...profile.notes.filter((note) => !note.startsWith('No GPU found')), ...notes],
  })
}

function withVram(gpu: Gpu, bytes: number): Gpu {
  return { ...gpu, vramTotalBytes: bytes, vramUsableBytes: bytes, vramFreeBytes: null }
}

function sumWatts(gpus: Gpu[]): number {
  return gpus.reduce((sum, gpu) => sum + (gpu.powerLimitWatts ?? gpu.tdpWatts ?? 0), 0)
}

/** Host assumed for hardware described without a machine: 8 cores / 16 threads, RAM of twice the VRAM (≥ 32 GiB). */
const ASSUMED_CORES = { physical: 8, logical: 16 }

/**
 * A profile for hardware you do not have (`rigfit plan --gpu "RTX 3060 12GB" --gpus 2`). With `base` (this
 * machine's profile, or one loaded from a file) only the overridden parts change. Without it the host is an
 * assumption stated in `notes`: 8 cores, 16 threads, and RAM of twice the total VRAM, at least 32 GiB (a
 * typical workstation for such GPUs) unless `ramGiB` says otherwise.
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
  const vramGiB = overrides.vramGiB ?? (entry ? entry.vramGB / (entry.devicesPerBoard ?? 1) : 0)
  const ramGiB =
    overrides.ramGiB ??
    Math.max(32, 2 ** Math.ceil(Math.log2(Math.max(1, 2 * vramGiB * (overrides.gpus ?? 1)))))
  const total = Math.round(ramGiB * GIB)
  const reserve = osReserveBytes(total)
  const blank: HardwareProfile = {
    schemaVersion: HARDWARE_PROFILE_SCHEMA_VERSION,
    createdAt: new Date().toISOString(),
    rigfitVersion: RIGFIT_VERSION,
    source: 'what-if',
    overrides: [],
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
      physicalCores: ASSUMED_CORES.physical,
      logicalCores: ASSUMED_CORES.logical,
      usableCores: ASSUMED_CORES.logical,
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
    notes: [
      `Assumed host: ${ASSUMED_CORES.physical} cores / ${ASSUMED_CORES.logical} threads and ${ramGiB} GiB RAM (${overrides.ramGiB === undefined ? 'twice the VRAM, at least 32 GiB' : 'as given'}).`,
    ],
    probes: [],
  }
  return applyOverrides(blank, { ...overrides, ...(entry ? { gpu: entry } : {}), ramGiB }, catalog)
}
