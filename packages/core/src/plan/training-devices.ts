import { cpuHasBf16 } from '../device/capabilities.js'
import type { DeviceKind } from '../schemas/common.js'
import type { EstimateDevice } from '../schemas/estimate.js'
import type { Gpu, HardwareProfile } from '../schemas/hardware-profile.js'
import { cpuPeakTflops } from './cpu-peak.js'
import { assumedSocWatts, gpuCoresFromName } from './power.js'

/** The devices a plan trains on: a set of identical GPUs, or the CPU. */
export interface TrainingDevices {
  kind: DeviceKind
  /** GPUs used (empty on CPU). */
  gpus: Gpu[]
  name: string
  /** Memory one device may plan on: a GPU's usable VRAM (Apple: the working set) or usable RAM on CPU. */
  capacityBytes: number
  estimateDevice: EstimateDevice
  tdpWatts: number[]
  powerLimitWatts: (number | null)[]
  /** NVIDIA compute capability, or the gfx target of an AMD GPU. */
  computeCapability: string | null
  /** Figures taken from defaults because the GPU is not in any catalog. */
  assumedFigures: string[]
}

const KIND_BY_VENDOR: Record<Gpu['vendor'], DeviceKind | null> = {
  nvidia: 'cuda',
  amd: 'rocm',
  apple: 'mps',
  intel: 'xpu',
  other: null,
}

/** Figures for a GPU no catalog knows: a mid-range card, so plans stay possible and say they assumed. */
const UNKNOWN_GPU = { fp32Tflops: 10, memoryBandwidthGBs: 300, tdpWatts: 200 }
/** Host memory bandwidth when the profile did not measure it (dual-channel DDR4). */
const DEFAULT_HOST_BANDWIDTH_GBS = 20

/** A GPU rigfit trains on: discrete GPUs and Apple's unified-memory GPU; not other integrated graphics. */
export function isTrainingGpu(gpu: Gpu): boolean {
  return (
    KIND_BY_VENDOR[gpu.vendor] !== null && (!gpu.integrated || gpu.unifiedMemory) && gpu.vramUsableBytes > 0
  )
}

/**
 * Picks the training devices: the GPUs of the same model as the one with the most usable memory (mixing models
 * makes every step wait for the slowest), at most `maxGpus` of them; the CPU when there is no training GPU.
 */
export function selectTrainingDevices(
  profile: HardwareProfile,
  maxGpus: number | null = null,
): TrainingDevices {
  const candidates = profile.gpus.filter(isTrainingGpu)
  const primary = [...candidates].sort(
    (a, b) => b.vramUsableBytes - a.vramUsableBytes || a.index - b.index,
  )[0]
  if (!primary) return cpuDevices(profile)
  const same = candidates.filter((gpu) => gpu.name === primary.name && gpu.vendor === primary.vendor)
  const gpus = same.slice(0, maxGpus ?? same.length)
  const assumedFigures: string[] = []
  const orAssumed = (value: number | null, name: string, fallback: number) => {
    if (value !== null) return value
    assumedFigures.push(name)
    return fallback
  }
  const fp32Tflops = orAssumed(primary.fp32Tflops, 'fp32 TFLOPS', UNKNOWN_GPU.fp32Tflops)
  const bandwidth = orAssumed(primary.memoryBandwidthGBs, 'memory bandwidth', UNKNOWN_GPU.memoryBandwidthGBs)
  const tdp = primary.unifiedMemory
    ? socWatts(primary, assumedFigures)
    : orAssumed(primary.tdpWatts ?? primary.powerLimitWatts, 'TDP', UNKNOWN_GPU.tdpWatts)
  const capacityBytes = Math.min(...gpus.map((gpu) => gpu.vramUsableBytes))
  const kind = KIND_BY_VENDOR[primary.vendor] ?? 'cuda'
  return {
    kind,
    gpus,
    name: primary.name,
    capacityBytes,
    estimateDevice: {
      name: primary.name,
      kind,
      vramBytes: capacityBytes,
      fp16TensorTflops: primary.fp16TensorTflops,
      fp32Tflops,
      memoryBandwidthGBs: bandwidth,
      bf16: primary.bf16 === 'yes',
      tf32: primary.tf32 === 'yes',
      computeCapability: primary.computeCapability,
    },
    tdpWatts: gpus.map(() => tdp),
    powerLimitWatts: gpus.map((gpu) => gpu.powerLimitWatts),
    // AMD GPUs have a gfx target where NVIDIA ones have a compute capability: the plan names whichever exists,
    // so its consumers can tell an MI300 (gfx942, TF32) from an MI250 (gfx90a).
    computeCapability: primary.computeCapability ?? primary.gfxTarget,
    assumedFigures,
  }
}

/** A unified-memory SoC's power: its published figure, else one assumed from its GPU cores (said so in the plan). */
function socWatts(gpu: Gpu, assumedFigures: string[]): number {
  const known = gpu.tdpWatts ?? gpu.powerLimitWatts
  if (known !== null) return known
  const cores = gpuCoresFromName(gpu.catalog?.name ?? gpu.name) ?? gpuCoresFromName(gpu.name)
  if (cores === null) {
    assumedFigures.push('power figure')
    return UNKNOWN_GPU.tdpWatts
  }
  const watts = assumedSocWatts(cores)
  assumedFigures.push(`power figure (assumed ${watts} W from its ${cores} GPU cores)`)
  return watts
}

function cpuDevices(profile: HardwareProfile): TrainingDevices {
  const assumedFigures = profile.memory.bandwidthGBs === null ? ['memory bandwidth'] : []
  const bandwidth = profile.memory.bandwidthGBs ?? DEFAULT_HOST_BANDWIDTH_GBS
  return {
    kind: 'cpu',
    gpus: [],
    name: profile.cpu.brand,
    capacityBytes: profile.memory.usableBytes,
    estimateDevice: {
      name: profile.cpu.brand,
      kind: 'cpu',
      vramBytes: profile.memory.usableBytes,
      fp16TensorTflops: null,
      fp32Tflops: Math.max(cpuPeakTflops(profile.cpu), 0.01),
      memoryBandwidthGBs: bandwidth,
      bf16: cpuHasBf16(profile.cpu.flags),
      tf32: false,
      computeCapability: null,
    },
    tdpWatts: [],
    powerLimitWatts: [],
    computeCapability: null,
    assumedFigures,
  }
}
