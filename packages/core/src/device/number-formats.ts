import type { Support } from '../schemas/common.js'
import type { Gpu } from '../schemas/index.js'
import { hasFp8, isAmpereOrNewer, isCdna3, parseComputeCapability } from './capabilities.js'

type PrecisionFacts = Pick<Gpu, 'tensorCores' | 'fp16' | 'bf16' | 'tf32' | 'fp8' | 'int8'>

/**
 * Number formats by NVIDIA compute capability, as the CUDA programming guide and PyTorch use them:
 * FP16 at full rate from 5.3 (sm_61 consumer Pascal runs it at 1/64 rate, so "emulated"), tensor cores from
 * 7.0, BF16 and TF32 from 8.0 (PyTorch emulates BF16 on 6.x/7.x), FP8 from 8.9, INT8 dot products from 6.1.
 * GeForce GTX 16 and MX parts are Turing without tensor cores.
 */
export function nvidiaPrecision(computeCapability: string, name: string): PrecisionFacts {
  const parsed = parseComputeCapability(computeCapability)
  const cc = parsed === null ? 0 : parsed.major * 10 + parsed.minor
  const device = { kind: 'cuda' as const, computeCapability }
  const noTensorCores = /GTX 16|\bMX\d{3}\b/i.test(name)
  const fp16: Support = cc === 61 ? 'emulated' : cc >= 53 ? 'yes' : 'emulated'
  return {
    tensorCores: cc >= 70 && !noTensorCores,
    fp16,
    bf16: isAmpereOrNewer(device) ? 'yes' : cc >= 60 ? 'emulated' : 'no',
    tf32: isAmpereOrNewer(device) ? 'yes' : 'no',
    fp8: hasFp8(device) ? 'yes' : 'no',
    int8: cc >= 61 ? 'yes' : 'no',
  }
}

/**
 * Number formats by AMD gfx target: CDNA 2/3 (gfx90a, gfx94x, gfx950) have matrix cores with BF16, CDNA 3
 * adds FP8 and TF32 (xf32); RDNA 3/4 (gfx11xx, gfx12xx) have WMMA with FP16/BF16 (FP8 on RDNA 4); RDNA 2
 * (gfx103x) runs BF16 without matrix units.
 */
export function amdPrecision(gfxTarget: string): PrecisionFacts {
  const target = gfxTarget.toLowerCase()
  const cdna3 = isCdna3(target)
  const cdna = cdna3 || /^gfx90[8a]$/.test(target)
  const rdna3plus = /^gfx1[12]\d[0-9a-f]$/.test(target)
  const rdna4 = /^gfx12\d[0-9a-f]$/.test(target)
  const rdna2 = /^gfx103[0-9a-f]$/.test(target)
  return {
    // Matrix cores in the NVIDIA sense are CDNA's; RDNA 3's WMMA runs on the shader units.
    tensorCores: cdna,
    fp16: cdna || rdna3plus || rdna2 || /^gfx9/.test(target) ? 'yes' : 'unknown',
    bf16: cdna || rdna3plus ? 'yes' : rdna2 ? 'emulated' : 'unknown',
    tf32: cdna3 ? 'yes' : 'no',
    fp8: cdna3 || rdna4 ? 'yes' : 'no',
    int8: cdna || rdna3plus || rdna2 ? 'yes' : 'unknown',
  }
}

/** Apple GPU family by chip generation (Metal feature set tables): M1 → apple7, M2 → apple8, M3/M4 → apple9. */
export function appleGpuFamily(chipName: string): string | null {
  const generation = /\bM(\d+)\b/.exec(chipName)?.[1]
  if (!generation) return null
  const family = { '1': 7, '2': 8, '3': 9, '4': 9 }[generation] ?? null
  return family === null ? null : `apple${family}`
}

/**
 * Formats on Apple silicon through MPS: FP16 everywhere; BF16 from the M2's GPU (apple8) on, and only
 * emulated on M1; no TF32 or FP8 data types.
 */
export function applePrecision(metalFamily: string | null): PrecisionFacts {
  const generation = Number(/apple(\d+)/.exec(metalFamily ?? '')?.[1])
  return {
    tensorCores: false,
    fp16: 'yes',
    bf16: Number.isFinite(generation) ? (generation >= 8 ? 'yes' : 'emulated') : 'unknown',
    tf32: 'no',
    fp8: 'no',
    int8: 'yes',
  }
}
