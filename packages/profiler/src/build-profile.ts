import {
  familyOf,
  type Gpu,
  type GpuCatalogEntry,
  HARDWARE_PROFILE_SCHEMA_VERSION,
  type HardwareProfile,
  RIGFIT_VERSION,
} from '@rigfit/core'
import type { ProbeCollection } from './collect-probes.js'
import { formatBytes } from './format.js'
import { amdGpus } from './gpu/amd.js'
import { appleWorkingSetBytes, macGpus } from './gpu/apple.js'
import { enrichFromCatalog } from './gpu/enrich.js'
import { gpuRecord } from './gpu/gpu-record.js'
import { intelGpus } from './gpu/intel.js'
import { nvidiaGpus } from './gpu/nvidia.js'
import { buildInterconnect } from './interconnect.js'
import { osReserveBytes } from './memory-reserve.js'
import { trainingIsaFlags } from './parsers/cpuinfo.js'
import { MAX_GPUS_PER_NODE, RANGES } from './parsers/limits.js'
import { sysctlNumber } from './parsers/sysctl.js'
import { siArray, siNumber, siRecord, siString } from './system/si-fields.js'
import { throttlingRisk } from './thermal-risk.js'

export interface BuildOptions {
  catalog?: GpuCatalogEntry[]
  createdAt?: string
}

/** Turns what the probes found into a HardwareProfile; every unknown stays null or "unknown", never guessed. */
export function buildProfile(c: ProbeCollection, options: BuildOptions = {}): HardwareProfile {
  const notes: string[] = []
  const memory = buildMemory(c, notes)
  const gpus = buildGpus(c, memory.totalBytes, options.catalog ?? [], notes)
  const cpu = buildCpu(c)
  const power = c.power ?? powerFromSystemInformation(c)
  const cpuTempC = c.thermal?.cpuTempC ?? siNumber(siRecord(c.si.cpuTemperature).main)
  const gpuPower = gpus.map((gpu) => gpu.powerLimitWatts ?? gpu.tdpWatts)
  const tdpParts = [...gpuPower, c.cpuSysfs?.packageTdpWatts ?? null].filter(
    (watts): watts is number => watts !== null,
  )
  const profile: HardwareProfile = {
    schemaVersion: HARDWARE_PROFILE_SCHEMA_VERSION,
    createdAt: options.createdAt ?? new Date().toISOString(),
    rigfitVersion: RIGFIT_VERSION,
    source: 'detected',
    overrides: [],
    host: buildHost(c),
    cpu: { ...cpu, temperatureC: cpuTempC },
    memory,
    gpus,
    interconnect: {
      ...buildInterconnect(gpus, c.nvidia?.topo ?? null),
      ...(c.networkPorts === null ? {} : { ports: c.networkPorts }),
    },
    acceleration: {
      cuda: c.nvidia?.cudaVersion ?? null,
      rocm: gpus.some((gpu) => gpu.vendor === 'amd') || c.rocmVersion ? c.rocmVersion : null,
      metal: c.platform === 'darwin' && gpus.some((gpu) => gpu.metalFamily !== null),
      mps: c.platform === 'darwin' && gpus.some((gpu) => gpu.vendor === 'apple'),
      opencl: c.opencl,
      xpu: gpus.some((gpu) => gpu.vendor === 'intel' && gpu.detectedBy === 'xpu-smi'),
    },
    storage: buildStorage(c, notes),
    network: { status: 'not-measured', downloadMbps: null, target: null },
    power: {
      ...power,
      tdpBudgetWatts:
        tdpParts.length > 0 ? Math.round(tdpParts.reduce((sum, watts) => sum + watts, 0)) : null,
    },
    thermal: {
      cpuTempC,
      gpuTempsC: gpus.map((gpu) => gpu.temperatureC),
      throttlingRisk: throttlingRisk(
        cpuTempC,
        gpus.map((gpu) => gpu.temperatureC),
        power.onBattery,
      ),
    },
    benchmark: { ran: false, ms: null, notes: [] },
    notes,
    probes: c.records,
  }
  if (profile.host.container.memoryLimitBytes !== null && memory.limitedBy === 'cgroup') {
    notes.push(
      `Container memory limit ${formatBytes(profile.host.container.memoryLimitBytes)} applies instead of the host's RAM.`,
    )
  }
  if (profile.host.container.cpuQuotaCores !== null) {
    notes.push(`Container CPU quota: ${profile.host.container.cpuQuotaCores} cores of ${cpu.logicalCores}.`)
  }
  return profile
}

function buildHost(c: ProbeCollection): HardwareProfile['host'] {
  const osInfo = siRecord(c.si.osInfo)
  const system = siRecord(c.si.system)
  const systemVirtual = typeof system.virtual === 'boolean' ? system.virtual : null
  return {
    hostname: c.hostname,
    platform: c.platform,
    distro: c.osRelease?.PRETTY_NAME ?? siString(osInfo.distro) ?? c.platform,
    release: c.osRelease?.VERSION_ID ?? siString(osInfo.release) ?? c.kernel,
    kernel: c.kernel,
    arch: c.arch,
    virtualized: c.linuxHost?.virtualized ?? systemVirtual,
    container: {
      detected: c.linuxHost?.container ?? false,
      memoryLimitBytes: effectiveLimit(
        c.cgroup?.memoryLimitBytes ?? null,
        c.meminfo?.totalBytes ?? c.os.totalmem,
      ),
      cpuQuotaCores: c.cgroup?.cpuQuotaCores ?? null,
      cgroupVersion: c.cgroup?.version ?? null,
    },
  }
}

/** A cgroup limit at or above the host's RAM limits nothing. */
function effectiveLimit(limit: number | null, hostTotal: number): number | null {
  return limit !== null && limit < hostTotal ? limit : null
}

const CPU_VENDORS: Record<string, string> = {
  GenuineIntel: 'Intel',
  AuthenticAMD: 'AMD',
  HygonGenuine: 'Hygon',
  CentaurHauls: 'Centaur',
}

function buildCpu(c: ProbeCollection): Omit<HardwareProfile['cpu'], 'temperatureC'> {
  const si = siRecord(c.si.cpu)
  const sysctl = c.sysctl ?? {}
  const rawVendor =
    c.cpuinfo?.vendor ??
    siString(si.manufacturer) ??
    (c.platform === 'darwin' && c.arch === 'arm64' ? 'Apple' : null)
  const brand =
    c.cpuinfo?.brand ?? sysctl['machdep.cpu.brand_string'] ?? siString(si.brand) ?? c.os.cpuModel ?? 'unknown'
  const logical =
    c.cpuinfo?.logicalCores ||
    sysctlNumber(sysctl, 'hw.logicalcpu', RANGES.cpuCount) ||
    siNumber(si.cores) ||
    c.os.cpuCount ||
    1
  const physical =
    c.cpuinfo?.physicalCores ??
    (sysctlNumber(sysctl, 'hw.physicalcpu', RANGES.cpuCount) || siNumber(si.physicalCores) || logical)
  const quota = c.cgroup?.cpuQuotaCores ?? null
  const usable = Math.max(
    0.01,
    Math.min(logical, c.os.availableParallelism, quota ?? Number.POSITIVE_INFINITY),
  )
  const brandGHz = Number(/@\s*([\d.]+)\s*GHz/i.exec(brand)?.[1])
  const siSpeed = siNumber(si.speed)
  const siSpeedMax = siNumber(si.speedMax)
  const macHz = sysctlNumber(sysctl, 'hw.cpufrequency', RANGES.cpuHz) ?? 0
  const macMaxHz = sysctlNumber(sysctl, 'hw.cpufrequency_max', RANGES.cpuHz) ?? 0
  return {
    vendor: rawVendor
      ? Object.hasOwn(CPU_VENDORS, rawVendor)
        ? (CPU_VENDORS[rawVendor] as string)
        : rawVendor
      : 'unknown',
    brand,
    arch: c.arch,
    physicalCores: Math.max(1, Math.round(physical)),
    logicalCores: Math.max(1, Math.round(logical)),
    usableCores: Math.round(usable * 100) / 100,
    baseGHz:
      c.cpuSysfs?.baseGHz ??
      (Number.isFinite(brandGHz) && brandGHz > 0 ? brandGHz : null) ??
      (macHz > 0 ? round2(macHz / 1e9) : null) ??
      (siSpeed && siSpeed > 0 ? siSpeed : null) ??
      (c.cpuinfo?.currentMHz ? round2(c.cpuinfo.currentMHz / 1000) : null),
    boostGHz:
      c.cpuSysfs?.boostGHz ??
      (macMaxHz > 0 ? round2(macMaxHz / 1e9) : null) ??
      (siSpeedMax && siSpeedMax > 0 ? siSpeedMax : null),
    flags: cpuFlags(c),
    numaNodes: c.cpuSysfs?.numaNodes ?? 1,
  }
}

function round2(value: number): number {
  return Math.round(value * 100) / 100
}

function cpuFlags(c: ProbeCollection): HardwareProfile['cpu']['flags'] {
  if (c.cpuinfo && c.cpuinfo.flags.size > 0) return trainingIsaFlags(c.cpuinfo.flags, c.arch)
  if (c.sysctl) {
    const on = (key: string) => c.sysctl?.[key] === '1'
    return {
      avx2: on('hw.optional.avx2_0'),
      avx512: on('hw.optional.avx512f'),
      avx512bf16: false,
      amx: false,
      fma: on('hw.optional.fma') || c.arch === 'arm64',
      neon: c.arch === 'arm64' || on('hw.optional.AdvSIMD'),
    }
  }
  const siFlags = new Set((siString(siRecord(c.si.cpu).flags) ?? '').toLowerCase().split(/\s+/))
  return trainingIsaFlags(siFlags, c.arch)
}

function buildMemory(c: ProbeCollection, notes: string[]): HardwareProfile['memory'] {
  const siMem = siRecord(c.si.mem)
  const hostTotal =
    c.meminfo?.totalBytes ??
    (sysctlNumber(c.sysctl ?? {}, 'hw.memsize', RANGES.memoryBytes) || siNumber(siMem.total) || c.os.totalmem)
  const hostAvailable = c.meminfo?.availableBytes ?? siNumber(siMem.available) ?? c.os.freemem
  const limit = effectiveLimit(c.cgroup?.memoryLimitBytes ?? null, hostTotal)
  const totalBytes = limit ?? hostTotal
  const reserve = osReserveBytes(totalBytes)
  const swap = c.swap ?? { totalBytes: siNumber(siMem.swaptotal) ?? 0, deviceKind: 'unknown' as const }
  if (swap.deviceKind === 'zram')
    notes.push('Swap is zram (compressed RAM): it does not add room for training.')
  return {
    totalBytes,
    availableBytes: Math.min(hostAvailable, totalBytes),
    osReserveBytes: reserve,
    usableBytes: Math.max(0, totalBytes - reserve),
    limitedBy: limit === null ? 'host' : 'cgroup',
    swap: { totalBytes: swap.totalBytes, deviceKind: swap.totalBytes === 0 ? 'none' : swap.deviceKind },
    bandwidthGBs: null,
  }
}

function buildGpus(c: ProbeCollection, ramBytes: number, catalog: GpuCatalogEntry[], notes: string[]): Gpu[] {
  const pci = c.pciGpus ?? []
  const gpus: Gpu[] = []
  if (c.nvidia) gpus.push(...nvidiaGpus(c.nvidia))
  if (c.platform === 'linux') gpus.push(...amdGpus(c.amd, pci), ...intelGpus(pci, c.xpu))
  if (c.platform === 'darwin' && c.macDisplays) gpus.push(...macGpus(c.macDisplays, c.sysctl ?? {}, ramBytes))
  if (c.platform === 'win32') gpus.push(...windowsGpus(c, gpus.length > 0))
  const enriched = gpus.map((gpu) =>
    enrichFromCatalog(gpu, catalog, gpu.vendor === 'apple' ? ramBytes : null),
  )
  // Discrete devices first: the planner's primary GPU is the first one.
  enriched.sort((a, b) => Number(a.integrated) - Number(b.integrated))
  if (enriched.length > MAX_GPUS_PER_NODE) {
    notes.push(
      `${enriched.length} GPUs were reported; only the first ${MAX_GPUS_PER_NODE} are kept (no node has more).`,
    )
    enriched.length = MAX_GPUS_PER_NODE
  }
  gpuNotes(c, enriched, notes)
  return enriched
}

function gpuNotes(c: ProbeCollection, gpus: Gpu[], notes: string[]): void {
  const nvidiaOnBus = (c.pciGpus ?? []).filter((device) => device.vendor === 'nvidia').length
  const failed = (name: string) => c.records.find((record) => record.name === name && !record.ok)
  if (nvidiaOnBus > 0 && !c.nvidia) {
    const why = failed('nvidia-smi')?.error ?? 'nvidia-smi gave no answer'
    notes.push(
      `${nvidiaOnBus} NVIDIA device(s) on the PCI bus, but nvidia-smi did not work (${why}): install or repair the NVIDIA driver.`,
    )
  }
  if (c.nvidia && c.nvidia.computeCaps.size === 0) {
    const fromCatalog = gpus.filter((gpu) => gpu.vendor === 'nvidia' && gpu.computeCapability !== null).length
    notes.push(
      `This NVIDIA driver does not report compute capability${fromCatalog > 0 ? '; it was taken from the GPU catalog' : ''}.`,
    )
  }
  for (const gpu of gpus) {
    if (gpu.vendor === 'apple') {
      const source =
        appleWorkingSetBytes(gpu.vramTotalBytes, c.sysctl ?? {}).source === 'sysctl'
          ? 'iogpu.wired_limit_mb'
          : 'the macOS default (2/3 of RAM up to 36 GiB, 3/4 above)'
      notes.push(
        `${gpu.name}: unified memory; the GPU may use ${formatBytes(gpu.vramUsableBytes)} (${source}).`,
      )
    } else if (gpu.integrated) {
      notes.push(
        `${gpu.name} is integrated: it shares system RAM, so only its own ${formatBytes(gpu.vramTotalBytes)} count as VRAM.`,
      )
    }
  }
  if (gpus.length === 0) {
    const looked = c.records
      .filter((record) => /^(nvidia-smi|rocm-smi|amd-smi|xpu-smi|system_profiler|pci)$/.test(record.name))
      .map((record) => `${record.name}: ${record.ok ? 'no GPU' : record.error}`)
    notes.unshift(`No GPU found: training would run on the CPU. Looked at ${looked.join('; ') || 'nothing'}.`)
  }
}

/** Windows: systeminformation's controllers other than NVIDIA (nvidia-smi reports those itself). */
function windowsGpus(c: ProbeCollection, haveNvidia: boolean): Gpu[] {
  const controllers = siArray(siRecord(c.si.graphics).controllers).map(siRecord)
  return controllers
    .filter((controller) => !(haveNvidia && /nvidia/i.test(siString(controller.vendor) ?? '')))
    .flatMap((controller, index) => {
      const name = siString(controller.model) ?? siString(controller.name)
      if (!name) return []
      const vendorText = `${siString(controller.vendor) ?? ''} ${name}`.toLowerCase()
      const vendor = /nvidia/.test(vendorText)
        ? 'nvidia'
        : /amd|ati|radeon/.test(vendorText)
          ? 'amd'
          : /intel/.test(vendorText)
            ? 'intel'
            : 'other'
      const dynamic = controller.vramDynamic === true
      const vram = dynamic ? 0 : Math.round((siNumber(controller.vram) ?? 0) * 1024 * 1024)
      return [
        gpuRecord({
          index,
          vendor,
          name,
          detectedBy: 'systeminformation',
          family: familyOf(vendor, name, null),
          integrated: dynamic,
          unifiedMemory: dynamic,
          vramTotalBytes: vram,
          vramUsableBytes: vram,
          migMode: 'unknown',
        }),
      ]
    })
}

function buildStorage(c: ProbeCollection, notes: string[]): HardwareProfile['storage'] {
  if (c.mounts) {
    for (const mount of c.mounts)
      if (mount.kind === 'unknown') notes.push(`Storage ${mount.mount}: kind unknown (${mount.kindReason}).`)
    return c.mounts.map((mount) => ({
      mount: mount.mount,
      device: mount.device,
      fsType: mount.fsType,
      kind: mount.kind,
      totalBytes: mount.totalBytes,
      freeBytes: mount.freeBytes,
      readMBs: null,
      writeMBs: null,
    }))
  }
  const layout = siArray(c.si.diskLayout).map(siRecord)
  const kind = (): HardwareProfile['storage'][number]['kind'] => {
    if (layout.length !== 1) return 'unknown'
    const text = `${siString(layout[0]?.type) ?? ''} ${siString(layout[0]?.interfaceType) ?? ''}`
    return /nvme/i.test(text)
      ? 'nvme'
      : /ssd/i.test(text)
        ? 'ssd'
        : /\bhd\b|hdd/i.test(text)
          ? 'hdd'
          : 'unknown'
  }
  return siArray(c.si.fsSize)
    .map(siRecord)
    .flatMap((fs) => {
      const mount = siString(fs.mount)
      const size = siNumber(fs.size)
      if (!mount || !size) return []
      return [
        {
          mount,
          device: siString(fs.fs) ?? mount,
          fsType: siString(fs.type) ?? 'unknown',
          kind: kind(),
          totalBytes: Math.round(size),
          freeBytes: Math.round(siNumber(fs.available) ?? 0),
          readMBs: null,
          writeMBs: null,
        },
      ]
    })
}

function powerFromSystemInformation(c: ProbeCollection): Omit<HardwareProfile['power'], 'tdpBudgetWatts'> {
  const battery = siRecord(c.si.battery)
  if (battery.hasBattery === true) {
    const ac = typeof battery.acConnected === 'boolean' ? battery.acConnected : null
    return { batteryPresent: true, onBattery: ac === false, acOnline: ac, percent: siNumber(battery.percent) }
  }
  return { batteryPresent: false, onBattery: false, acOnline: null, percent: null }
}
