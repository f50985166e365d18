import { type Gpu, type GpuCatalogEntry, matchGpu } from '@rigfit/core'
import { gpuRecord } from './gpu-record.js'

const GIB = 1024 ** 3

/**
 * Fills a detected GPU's gaps from its catalog entry (spec-sheet bandwidth, TFLOPS, TDP, architecture, the
 * family's rule pack, and the number formats the catalog states). What the device itself reported wins.
 * `memoryBytes` is what tells variants apart: the VRAM, or for unified memory the machine's RAM.
 */
export function enrichFromCatalog(
  gpu: Gpu,
  catalog: GpuCatalogEntry[],
  memoryBytes: number | null = null,
): Gpu {
  if (catalog.length === 0) return gpu
  const match = matchGpu(
    gpu.name,
    memoryBytes ?? (gpu.vramTotalBytes > 0 ? gpu.vramTotalBytes : null),
    catalog,
  )
  if (!match) return gpu
  return applyCatalogEntry(gpu, match.entry, match.matchedBy)
}

/** Merges a catalog entry into a GPU record; `matchedBy` says how it was found (`override`: named by the user). */
export function applyCatalogEntry(
  gpu: Gpu,
  entry: GpuCatalogEntry,
  matchedBy: 'exact' | 'normalized' | 'vram' | 'override',
): Gpu {
  const computeCapability =
    gpu.computeCapability ?? (entry.vendor === 'nvidia' ? entry.computeCapability : null)
  const gfxTarget =
    gpu.gfxTarget ??
    (entry.vendor === 'amd' && /^gfx/i.test(entry.computeCapability) ? entry.computeCapability : null)
  return {
    ...gpu,
    family: entry.family,
    arch: gpu.arch ?? entry.arch,
    computeCapability,
    gfxTarget,
    metalFamily: gpu.metalFamily ?? (entry.vendor === 'apple' ? entry.computeCapability : null),
    tensorCores: entry.tensorCores,
    bf16: entry.bf16,
    tf32: entry.tf32,
    fp8: entry.fp8,
    fp16: gpu.fp16 === 'unknown' ? 'yes' : gpu.fp16,
    memoryBandwidthGBs: gpu.memoryBandwidthGBs ?? entry.memoryBandwidthGBs,
    fp32Tflops: gpu.fp32Tflops ?? entry.fp32Tflops,
    fp16TensorTflops: gpu.fp16TensorTflops ?? entry.fp16TensorTflops,
    tdpWatts: gpu.tdpWatts ?? entry.tdpWatts,
    catalog: { id: entry.id, name: entry.name, pack: entry.family, matchedBy },
  }
}

/** A GPU record made from a catalog entry alone: hardware described, not detected (what-if planning). */
export function gpuFromCatalog(entry: GpuCatalogEntry, index: number): Gpu {
  const vram = Math.round((entry.vramGB / (entry.devicesPerBoard ?? 1)) * GIB)
  const base = gpuRecord({
    index,
    vendor: entry.vendor,
    name: entry.name,
    detectedBy: 'catalog',
    integrated: entry.unifiedMemory,
    unifiedMemory: entry.unifiedMemory,
    vramTotalBytes: vram,
    powerLimitWatts: entry.tdpWatts,
  })
  return applyCatalogEntry(base, entry, 'override')
}
