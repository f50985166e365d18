import type { HardwareProfile } from '../schemas/hardware-profile.js'
import { cpuPeakTflops } from './cpu-peak.js'

/**
 * A performance score out of 10 for LLM training, with its reasons. Compute counts for 60 % on a log scale of
 * the machine's dense 16-bit (or fp32 without matrix units) TFLOPS — 1 TFLOPS scores 3, 165 (an RTX 4090)
 * about 8, 5000+ (8 datacenter GPUs) 10 — and training memory for 40 % on a log scale of total device memory
 * (host RAM counts at a quarter on CPU-only machines: it is slow memory). Battery and thermal risk subtract.
 */
export interface PerformanceScore {
  score: number
  label: 'Excellent' | 'Very good' | 'Good' | 'Limited' | 'Minimal'
  reasons: string[]
}

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value))

export function performanceScore(profile: HardwareProfile): PerformanceScore {
  const reasons: string[] = []
  const gpus = profile.gpus.filter((gpu) => !gpu.integrated || gpu.unifiedMemory)
  let tflops: number
  let memoryGiB: number
  if (gpus.length > 0) {
    tflops = gpus.reduce((sum, gpu) => sum + (gpu.fp16TensorTflops ?? gpu.fp32Tflops ?? 0), 0)
    memoryGiB = gpus.reduce((sum, gpu) => sum + gpu.vramUsableBytes, 0) / 2 ** 30
    const first = gpus[0]
    const label = gpus.length > 1 ? `${gpus.length}x ${first?.name}` : (first?.name ?? 'GPU')
    reasons.push(
      `${label}: ${tflops.toFixed(1)} TFLOPS 16-bit peak, ${memoryGiB.toFixed(0)} GiB for training`,
    )
  } else {
    tflops = cpuPeakTflops(profile.cpu)
    memoryGiB = profile.memory.usableBytes / 2 ** 30 / 4
    reasons.push(
      `no usable GPU: CPU training at about ${tflops.toFixed(2)} TFLOPS peak on ${profile.cpu.physicalCores} cores`,
    )
  }
  const compute = clamp(3 + 2.2 * Math.log10(Math.max(tflops, 1e-3)), 0, 10)
  const memory = clamp(2 * Math.log2(Math.max(memoryGiB, 0.5) / 2), 0, 10)
  let score = 0.6 * compute + 0.4 * memory
  if (profile.power.onBattery) {
    score -= 1
    reasons.push('running on battery: plans are held to conservative limits')
  }
  if (profile.thermal.throttlingRisk === 'high') {
    score -= 0.5
    reasons.push('high thermal throttling risk')
  }
  if (gpus.length > 1 && profile.interconnect.kind === 'nvlink')
    reasons.push('NVLink between GPUs: sharding scales well')
  if (gpus.length > 1 && profile.interconnect.kind === 'pcie')
    reasons.push('GPUs talk over PCIe: prefer DDP over sharding')
  const hdd = profile.storage.length > 0 && profile.storage.every((disk) => disk.kind === 'hdd')
  if (hdd) reasons.push('only spinning disks: stream or cache the dataset in RAM')
  score = Math.round(clamp(score, 0, 10) * 10) / 10
  const label =
    score >= 8.5
      ? 'Excellent'
      : score >= 7
        ? 'Very good'
        : score >= 5
          ? 'Good'
          : score >= 3
            ? 'Limited'
            : 'Minimal'
  return { score, label, reasons }
}
