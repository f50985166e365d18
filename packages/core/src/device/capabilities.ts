import type { DeviceKind } from '../schemas/common.js'

/** An NVIDIA compute capability, `"8.6"` → major 8, minor 6, value 8.6. */
export interface ComputeCapability {
  major: number
  minor: number
  value: number
}

// A handful of distinct capabilities, read by every estimate and every candidate: each string is parsed once.
const parsedCache = new Map<string, ComputeCapability | null>()

/**
 * The one parser of a compute capability (`"8.6"`, `"12.0"`, `"9"`); null when there is none or it is not a
 * number (ROCm's gfx targets, Apple, the CPU).
 */
export function parseComputeCapability(raw: string | null | undefined): ComputeCapability | null {
  if (raw === null || raw === undefined) return null
  let parsed = parsedCache.get(raw)
  if (parsed === undefined) {
    const match = /^\s*(\d+)(?:\.(\d+))?/.exec(raw)
    parsed = match
      ? { major: Number(match[1]), minor: Number(match[2] ?? 0), value: Number.parseFloat(raw) }
      : null
    parsedCache.set(raw, parsed)
  }
  return parsed
}

/** The compute capability as a number (`"8.6"` → 8.6); NaN when unknown. */
export function computeCapabilityNumber(raw: string | null | undefined): number {
  return parseComputeCapability(raw)?.value ?? Number.NaN
}

/**
 * What a training device is, as far as its number formats and kernels go: its kind, and its NVIDIA compute
 * capability (a plan records a ROCm device's gfx target in the same field). A CPU says whether it has bf16
 * instructions (AVX512_BF16 or AMX, as the profiler reads them from the CPU's flags).
 */
export interface DeviceIdentity {
  kind: DeviceKind
  computeCapability: string | null
  cpuBf16?: boolean
}

/** A CPU runs bf16 natively with AVX512_BF16 or AMX (Intel Cooper Lake, Sapphire Rapids; AMD Zen 4). */
export function cpuHasBf16(flags: { avx512bf16: boolean; amx: boolean }): boolean {
  return flags.avx512bf16 || flags.amx
}

/** NVIDIA Ampere or newer (compute capability 8.0+): bf16 and TF32 tensor cores, FlashAttention 2. */
export function isAmpereOrNewer(device: DeviceIdentity): boolean {
  return device.kind === 'cuda' && computeCapabilityNumber(device.computeCapability) >= 8
}

/** FlashAttention 2 runs on NVIDIA Ampere and newer only. */
export function hasFlashAttention(device: DeviceIdentity): boolean {
  return isAmpereOrNewer(device)
}

/** AMD CDNA 3 (gfx94x MI300 series, gfx950): xf32 matrix math, which PyTorch enables through `allow_tf32`. */
export function isCdna3(gfxTarget: string): boolean {
  return /^gfx9(4[0-9a-f]|50)$/.test(gfxTarget.toLowerCase())
}

/** TF32 matrix math: NVIDIA Ampere and newer, or AMD CDNA 3 (its xf32). */
export function hasTf32(device: DeviceIdentity): boolean {
  if (isAmpereOrNewer(device)) return true
  return device.kind === 'rocm' && isCdna3(device.computeCapability ?? '')
}

/** FP8 tensor cores: NVIDIA Ada and Hopper and newer (compute capability 8.9+). */
export function hasFp8(device: DeviceIdentity): boolean {
  return device.kind === 'cuda' && computeCapabilityNumber(device.computeCapability) >= 8.9
}

/**
 * bf16 in hardware: NVIDIA from Ampere on (older GPUs emulate it at the fp32 rate), AMD's and Intel's training
 * GPUs, and a CPU only with AVX512_BF16 or AMX (others emulate it). Apple's MPS is counted without it.
 */
export function hasNativeBf16(device: DeviceIdentity): boolean {
  switch (device.kind) {
    case 'cuda':
      return isAmpereOrNewer(device)
    case 'cpu':
      return device.cpuBf16 === true
    case 'mps':
      return false
    default:
      return true
  }
}

/**
 * The mixed precision a run moves to from fp32: bf16 where the device has it natively, fp16 with loss scaling on
 * a GPU without it, none on a CPU without it (it would run emulated, slower than fp32).
 */
export function mixedPrecisionFor(device: DeviceIdentity): 'bf16-mixed' | 'fp16-mixed' | null {
  if (hasNativeBf16(device)) return 'bf16-mixed'
  return device.kind === 'cpu' ? null : 'fp16-mixed'
}
