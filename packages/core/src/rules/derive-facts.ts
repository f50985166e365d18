import { computeCapabilityNumber } from '../device/capabilities.js'
import type { Mode } from '../schemas/common.js'
import type { Facts } from '../schemas/facts.js'
import type { Gpu, HardwareProfile } from '../schemas/hardware-profile.js'
import type { Workload } from '../schemas/workload.js'

const GIB = 1024 ** 3

/** What the planner knows beyond the profile: how many GPUs a candidate plan uses, its model size, its sequence. */
export interface FactExtras {
  /** GPUs the plan uses (the planner may plan for fewer than the machine has). */
  gpus?: number
  /** Parameters of the model being planned. */
  modelParams?: number
  seq?: number
}

/**
 * The facts rules read, from a hardware profile, a workload and a mode. The primary GPU is the discrete (or
 * Apple) GPU with the most usable memory; integrated PC graphics are not trained on, so a machine with only
 * those is planned as CPU-only (gpuFamily "cpu", integratedGpu true).
 */
export function deriveFacts(
  profile: HardwareProfile,
  workload: Workload | null,
  mode: Mode,
  extra: FactExtras = {},
): Facts {
  const trainable = profile.gpus.filter((gpu) => !gpu.integrated || gpu.vendor === 'apple')
  const primary = pickPrimary(trainable)
  const sameModel = primary
    ? trainable.filter((gpu) => gpu.name === primary.name && gpu.vendor === primary.vendor)
    : []
  const gpuCount = primary ? Math.max(0, Math.min(extra.gpus ?? sameModel.length, sameModel.length || 1)) : 0
  const vramGiB = primary ? round(primary.vramUsableBytes / GIB, 1) : 0
  const cc = computeCapabilityNumber(primary?.computeCapability)
  const usableCores = profile.cpu.usableCores
  const largestStore = [...profile.storage].sort((a, b) => b.freeBytes - a.freeBytes)[0]

  return {
    mode,
    platform: profile.host.platform,
    container: profile.host.container.detected,
    virtualized: profile.host.virtualized,

    gpuCount,
    gpuVendor: primary ? primary.vendor : 'none',
    gpuName: primary?.name ?? null,
    gpuFamily: primary ? primary.family : 'cpu',
    gpuCatalogId: primary?.catalog?.id ?? null,
    gpuArch: primary?.arch ?? null,
    mobileGpu: primary ? /\b(laptop|mobile|max-q)\b/i.test(primary.name) : false,
    computeCapability: Number.isFinite(cc) ? cc : null,
    computeCapabilityMajor: Number.isFinite(cc) ? Math.floor(cc) : null,
    gfxTarget: primary?.gfxTarget ?? null,
    metalFamily: primary?.metalFamily ?? null,
    appleChipGeneration: primary?.vendor === 'apple' ? appleGeneration(primary.name) : null,
    vramGiB,
    totalVramGiB: round(vramGiB * gpuCount, 1),
    tensorCores: primary ? primary.tensorCores : null,
    fp16: primary?.fp16 ?? 'no',
    bf16: primary?.bf16 ?? 'no',
    tf32: primary?.tf32 ?? 'no',
    fp8: primary?.fp8 ?? 'no',
    unifiedMemory: primary?.unifiedMemory ?? false,
    integratedGpu: !primary && profile.gpus.some((gpu) => gpu.integrated),
    migEnabled: primary?.migMode === 'enabled',
    interconnect: gpuCount > 1 ? profile.interconnect.kind : 'none',
    gpuTdpWatts: primary?.tdpWatts ?? null,
    gpuTempC: primary?.temperatureC ?? null,
    driverVersionMajor: leadingInteger(primary?.driverVersion ?? null),
    cudaVersion: primary?.vendor === 'nvidia' ? versionNumber(profile.acceleration.cuda) : null,
    rocmVersion: primary?.vendor === 'amd' ? versionNumber(profile.acceleration.rocm) : null,
    mps: profile.acceleration.mps,

    cpuVendor: cpuVendor(profile.cpu.vendor, profile.cpu.brand),
    cpuArch: profile.cpu.arch,
    physicalCores: profile.cpu.physicalCores,
    logicalCores: profile.cpu.logicalCores,
    usableCores,
    spareCores: Math.max(1, Math.floor(usableCores) - 1),
    numaNodes: profile.cpu.numaNodes,
    avx2: profile.cpu.flags.avx2,
    avx512: profile.cpu.flags.avx512,
    avx512bf16: profile.cpu.flags.avx512bf16,
    amx: profile.cpu.flags.amx,
    neon: profile.cpu.flags.neon,
    ramGiB: round(profile.memory.totalBytes / GIB, 1),
    usableRamGiB: round(profile.memory.usableBytes / GIB, 1),
    storageKind: largestStore?.kind ?? 'unknown',

    onBattery: profile.power.onBattery,
    batteryPercent: profile.power.batteryPresent ? profile.power.percent : null,
    throttlingRisk: profile.thermal.throttlingRisk,

    workloadKind: workload?.kind ?? 'none',
    method: workload?.method ?? 'none',
    modelParamsB: extra.modelParams !== undefined ? round(extra.modelParams / 1e9, 3) : null,
    seq: extra.seq ?? workload?.seq ?? null,
    nodes: workload?.nodes ?? 1,
  }
}

function pickPrimary(gpus: Gpu[]): Gpu | null {
  let best: Gpu | null = null
  for (const gpu of gpus) {
    if (!best || gpu.vramUsableBytes > best.vramUsableBytes) best = gpu
  }
  return best
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}

function appleGeneration(name: string): number | null {
  const match = name.match(/\bM(\d+)\b/i)
  return match ? Number(match[1]) : null
}

function leadingInteger(text: string | null): number | null {
  const match = text?.match(/^\s*(\d+)/)
  return match ? Number(match[1]) : null
}

/** "12.4" -> 12.4, "6.1.2" -> 6.1. */
function versionNumber(text: string | null): number | null {
  const match = text?.match(/(\d+)(?:\.(\d+))?/)
  if (!match) return null
  return Number(`${match[1]}.${match[2] ?? '0'}`)
}

function cpuVendor(vendor: string, brand: string): string {
  const text = `${vendor} ${brand}`
  if (/intel/i.test(text)) return 'intel'
  if (/\bamd\b|authenticamd/i.test(text)) return 'amd'
  if (/apple/i.test(text)) return 'apple'
  if (/arm|ampere|graviton|neoverse|qualcomm/i.test(text)) return 'arm'
  return vendor.trim().toLowerCase() || 'unknown'
}
