import { z } from 'zod'
import { Family, GpuVendor, Support } from './common.js'

/**
 * A public on-demand list price for renting one of these GPUs, per GPU-hour in US dollars, with where it was read:
 * the provider's page (`source`), the day it was seen there (`seen`) and, where the figure was read through a
 * verbatim transcription of that page, the transcription (`via`). Prices change; `--price-per-hour` overrides them.
 */
export const GpuListPrice = z.strictObject({
  usdPerGpuHour: z.number().positive(),
  provider: z.string().min(1),
  /** What was priced, in the provider's words: "1x NVIDIA H100 SXM", "8x NVIDIA A100 SXM 80 GB (per GPU)". */
  offer: z.string().min(1),
  source: z.string().url(),
  seen: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  via: z.string().url().optional(),
})
export type GpuListPrice = z.infer<typeof GpuListPrice>

/** One GPU model's spec-sheet facts, as shipped in a plugin's catalog.json (built from shared GPU specs). */
export const GpuCatalogEntry = z.strictObject({
  /** Stable id, kebab-case: `rtx-4090`, `a100-80gb-sxm4`, `m2-10c`. */
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  vendor: GpuVendor,
  family: Family,
  /** Vendor family label from the spec sheet, e.g. "GeForce RTX 40", "A100", "Instinct". */
  series: z.string(),
  name: z.string(),
  /** Other spellings seen in tools (nvidia-smi, rocm-smi, system_profiler) used by name matching. */
  aliases: z.array(z.string()),
  arch: z.string(),
  /** Memory of the whole board; with several devices per board each device the OS sees has vramGB / devicesPerBoard. */
  vramGB: z.number().positive(),
  /** Devices the OS shows per board: 2 for the dual-die MI250X, 1 otherwise. */
  devicesPerBoard: z.number().int().positive().default(1),
  memoryBandwidthGBs: z.number().positive(),
  fp32Tflops: z.number().positive(),
  /** Dense FP16/BF16 matrix rate with FP32 accumulate; null without matrix units. */
  fp16TensorTflops: z.number().positive().nullable(),
  /** NVIDIA tensor cores or AMD CDNA matrix cores (not RDNA3's WMMA on the shader units). */
  tensorCores: z.boolean(),
  bf16: Support,
  tf32: Support,
  fp8: Support,
  computeCapability: z.string(),
  tdpWatts: z.number().positive().nullable(),
  /** Integrated / unified-memory device (Apple). */
  unifiedMemory: z.boolean(),
  /** Figures marked unverified in the source data. */
  unverified: z.array(z.string()),
  source: z.string(),
  /** A sourced on-demand list price per GPU-hour (scripts/data/gpu-prices.csv); absent where none was found. */
  listPrice: GpuListPrice.optional(),
})
export type GpuCatalogEntry = z.infer<typeof GpuCatalogEntry>

export const GpuCatalog = z.strictObject({
  schemaVersion: z.literal(1),
  family: Family,
  entries: z.array(GpuCatalogEntry),
})
export type GpuCatalog = z.infer<typeof GpuCatalog>
