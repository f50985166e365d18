import { setImmediate as yieldToLoop } from 'node:timers/promises'

export interface MemoryBandwidthResult {
  /** Median copy rate over the passes, in GB/s (10^9 bytes copied per second, counted once: what mbw reports). */
  gbs: number
  bestGBs: number
  passes: number
  bufferBytes: number
  method: string
}

export interface MemoryBandwidthOptions {
  bufferBytes?: number
  maxPasses?: number
  budgetMs?: number
  onProgress?: (fraction: number) => void
}

const MIB = 1024 * 1024

/**
 * Copies one large buffer into another several times (Buffer#copy is libc memmove, as mbw's MEMCPY test) and
 * reports the median rate. The buffers are written once first so page faults are not timed; 256 MiB each is
 * far beyond any CPU cache. Yields to the event loop between passes so progress and timers keep running.
 */
export async function measureMemoryBandwidth(
  options: MemoryBandwidthOptions = {},
): Promise<MemoryBandwidthResult> {
  const bufferBytes = options.bufferBytes ?? 256 * MIB
  const maxPasses = options.maxPasses ?? 10
  const budgetMs = options.budgetMs ?? 1500
  const source = Buffer.allocUnsafeSlow(bufferBytes).fill(0x5a)
  const target = Buffer.allocUnsafeSlow(bufferBytes).fill(0)
  const rates: number[] = []
  const started = performance.now()
  for (let pass = 0; pass < maxPasses; pass += 1) {
    const passStart = performance.now()
    source.copy(target, 0, 0, bufferBytes)
    const seconds = (performance.now() - passStart) / 1000
    rates.push(bufferBytes / seconds / 1e9)
    options.onProgress?.((pass + 1) / maxPasses)
    await yieldToLoop()
    if (performance.now() - started > budgetMs && rates.length >= 3) break
  }
  const sorted = [...rates].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)] as number
  return {
    gbs: round(median),
    bestGBs: round(sorted.at(-1) as number),
    passes: rates.length,
    bufferBytes,
    method: `memcpy of ${bufferBytes / MIB} MiB buffers, median of ${rates.length} passes`,
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100
}
