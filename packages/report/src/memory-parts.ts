import type { MemoryBreakdown } from '@rigfit/core'
import { toGiB } from './units.js'

/**
 * The parts a device's memory is drawn in, bottom to top. The six terms are what training allocates; "allocator
 * reserve" is what the caching allocator holds beyond the peak (reserved − peak allocated); the CUDA context and
 * NCCL's buffers come on top. The terms are not all held at once (the peak is the largest simultaneous sum), so their stack can pass
 * the total that nvidia-smi would show, which is drawn as its own tick.
 */
export const MEMORY_PARTS = [
  ['weights', 'weights'],
  ['gradients', 'gradients'],
  ['optimizer', 'optimizer states'],
  ['activations', 'activations'],
  ['logits', 'logits and loss'],
  ['other', 'other (buffers, temporaries)'],
  ['reserve', 'allocator reserve'],
  ['cudaContext', 'CUDA context'],
  ['communication', 'NCCL buffers'],
] as const

export type MemoryPart = (typeof MEMORY_PARTS)[number][0]

export function partBytes(memory: MemoryBreakdown, part: MemoryPart): number {
  return part === 'reserve' ? Math.max(0, memory.reserved - memory.peakAllocated) : memory[part]
}

export interface MemoryRow {
  /** The bar it belongs to (a mode, or "estimate"). */
  bar: string
  part: string
  order: number
  gib: number
}

/** One row per part of one bar, in drawing order (the stack's order and the legend's). */
export function memoryRows(bar: string, memory: MemoryBreakdown): MemoryRow[] {
  return MEMORY_PARTS.map(([part, label], order) => ({
    bar,
    part: label,
    order,
    gib: toGiB(partBytes(memory, part)),
  }))
}

export const PART_LABELS: string[] = MEMORY_PARTS.map(([, label]) => label)
