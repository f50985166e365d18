import { CACHING_ALLOCATOR } from './constants.js'

/** The bytes a step holds at its two kinds of peak, and the block sizes that decide whether they share memory. */
export interface StepMemory {
  /** Allocated at the larger of the start and the end of backward. */
  backwardPeak: number
  /** What backward allocates and frees every step at that peak (activations, logits, workspace, copies). */
  backwardChurn: number
  /** Allocated at the optimizer step: persistent state, gradients and the step's temporaries. */
  stepPeak: number
  /** The optimizer step's own temporaries, allocated and freed every step. */
  stepTemporaries: number
  /** The activations backward frees before the optimizer step. */
  activations: number
  /** The largest token-shaped tensor the forward saves, in bytes. */
  activationBlock: number
  /** One weight gradient the optimizer step needs beside them, in bytes (an MLP projection's). */
  gradientBlock: number
  /**
   * The device's memory comes from PyTorch's segment-caching allocator (CUDA, and the HIP and XPU ones built on
   * its design); Apple's MPS allocator and host memory follow other rules.
   */
  segmentCache: boolean
}

export interface Reservation {
  /** What `torch.cuda.max_memory_reserved()` would report. */
  reserved: number
  /** The part of `reserved` that is free cached segments, handed back when a request finds the device full. */
  releasable: number
}

/**
 * The size of the cached segment a freed block returns to once its neighbours are free too: requests of 1 MiB or
 * less share 2 MiB segments of the small pool, those under 10 MiB share 20 MiB segments, larger ones get their own
 * segment rounded up to 2 MiB.
 */
function segmentBytes(request: number): number {
  const { smallSize, smallSegment, minLargeAlloc, largeSegment, roundLarge } = CACHING_ALLOCATOR
  if (request <= smallSize) return smallSegment
  if (request < minLargeAlloc) return largeSegment
  return Math.ceil(request / roundLarge) * roundLarge
}

/**
 * Whether a block freed by a request of `freed` bytes can serve a later request of `request` bytes. The caching
 * allocator splits a free block for a smaller request of the same pool, but never joins blocks of different
 * segments, and the small pool (requests of 1 MiB or less) and the large pool never lend to each other.
 */
export function freedBlockServes(freed: number, request: number): boolean {
  const small = CACHING_ALLOCATOR.smallSize
  if (request <= small || freed <= small) return request <= small && freed <= small
  return segmentBytes(freed) >= request
}

/**
 * What the caching allocator reserves for a training step. Within a phase, blocks freed for one size are split for
 * another and the leftovers fragment: a share `fragmentation` of what the phase allocates and frees. Across phases,
 * the activations backward frees serve the optimizer step's gradients only when their blocks are large enough;
 * when they are not (short sequences and small micro-batches beside wide layers), they stay cached beside the
 * step's peak. Those blocks are whole free segments: when a request finds the device full, the allocator releases
 * them and retries, so they never make a run fail and `room` (the device less what lives outside the allocator)
 * bounds them.
 */
export function reservation(step: StepMemory, fragmentation: number, room: number): Reservation {
  const backward = step.backwardPeak + fragmentation * step.backwardChurn
  const optimizerStep = step.stepPeak + fragmentation * step.stepTemporaries
  const needed = Math.max(backward, optimizerStep)
  const stranded =
    !step.segmentCache || freedBlockServes(step.activationBlock, step.gradientBlock) ? 0 : step.activations
  const reserved = Math.max(needed, Math.min(optimizerStep + stranded, room))
  return { reserved, releasable: reserved - needed }
}
