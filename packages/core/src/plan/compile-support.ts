import type { Quantization } from '../schemas/common.js'

/** The library versions of the stack that will run a plan, where known (`--stack NAME@VERSION` states them). */
export interface StackVersions {
  torch?: string | null
  bitsandbytes?: string | null
}

/**
 * The versions from which torch.compile traces bitsandbytes' quantized linear layers without graph breaks:
 * bitsandbytes 0.46.0 added it for its 4-bit and 8-bit layers, and 4-bit needs PyTorch 2.8 (bitsandbytes pull
 * requests #1616 and #1673). Before, Dynamo breaks the graph at every quantized layer (bitsandbytes issue #1184),
 * so compiling buys nothing and adds minutes of tracing, or fails.
 */
export const BNB_COMPILE_SINCE = { bitsandbytes: '0.46.0', torch: '2.8.0' } as const

/** Whether torch.compile is planned over a base of this quantization, and why. */
export function compileWithQuant(
  quant: Quantization,
  versions: StackVersions | null = null,
): { compiles: boolean; reason: string } {
  if (quant === 'none') return { compiles: true, reason: 'no quantized layers' }
  const bnb = versions?.bitsandbytes ?? null
  const torch = versions?.torch ?? null
  const since = BNB_COMPILE_SINCE
  if (bnb !== null && torch !== null && atLeast(bnb, since.bitsandbytes) && atLeast(torch, since.torch)) {
    return {
      compiles: true,
      reason: `bitsandbytes ${bnb} with torch ${torch} compiles its ${quant} layers without graph breaks`,
    }
  }
  const stated =
    bnb === null || torch === null
      ? 'the stack does not state its bitsandbytes and torch versions'
      : `this stack has bitsandbytes ${bnb} and torch ${torch}`
  return {
    compiles: false,
    reason: `torch.compile is off over a bitsandbytes ${quant} base: it traces those layers without graph breaks only from bitsandbytes ${since.bitsandbytes} with torch ${since.torch}, and ${stated}`,
  }
}

/** Dotted version comparison on the numeric parts (2.8.0+cu128 reads as 2.8.0). */
export function atLeast(version: string, minimum: string): boolean {
  const parts = (text: string) => (text.match(/^\d+(\.\d+)*/)?.[0] ?? '0').split('.').map(Number)
  const a = parts(version)
  const b = parts(minimum)
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const diff = (a[i] ?? 0) - (b[i] ?? 0)
    if (diff !== 0) return diff > 0
  }
  return true
}
