import { MEMORY_PARTS, type MemoryBreakdown, type MemoryPart } from '@rigfit/core'
import { toGiB } from './units.js'

// The parts and their words are core's, shared with the CLI. The terms are not all held at once (the peak is the
// largest simultaneous sum), so their stack can pass the total that nvidia-smi would show, drawn as its own tick.
export { MEMORY_PARTS, type MemoryPart }

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
