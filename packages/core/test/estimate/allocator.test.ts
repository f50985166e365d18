import { describe, expect, it } from 'vitest'
import { freedBlockServes, reservation, type StepMemory } from '../../src/estimate/allocator.js'

const MiB = 2 ** 20
const GiB = 2 ** 30
const SIZES = [0.25, 0.5, 1, 1.5, 4, 9.5, 10, 12, 19, 20, 21, 44, 64, 96, 150].map((m) => m * MiB)

describe('freedBlockServes: the caching allocator’s segments', () => {
  it('never lends between the small pool (up to 1 MiB) and the large pool', () => {
    for (const freed of SIZES)
      for (const request of SIZES)
        if (freed <= MiB !== request <= MiB)
          expect(freedBlockServes(freed, request), `${freed} ${request}`).toBe(false)
  })

  it('gives a block under 10 MiB back as its whole 20 MiB segment, a larger one as its own 2 MiB-rounded segment', () => {
    for (const freed of SIZES.filter((size) => size > MiB)) {
      const segment = freed < 10 * MiB ? 20 * MiB : Math.ceil(freed / (2 * MiB)) * 2 * MiB
      for (const request of SIZES.filter((size) => size > MiB))
        expect(freedBlockServes(freed, request), `${freed} ${request}`).toBe(request <= segment)
    }
  })
})

const step = (fields: Partial<StepMemory>): StepMemory => ({
  backwardPeak: 20 * GiB,
  backwardChurn: 5 * GiB,
  stepPeak: 18 * GiB,
  stepTemporaries: 0,
  activations: 4 * GiB,
  activationBlock: 200 * MiB,
  gradientBlock: 100 * MiB,
  segmentCache: true,
  ...fields,
})

describe('reservation', () => {
  it('adds each phase’s fragmentation to its own peak and keeps the larger', () => {
    const { reserved, releasable } = reservation(step({}), 0.2, Number.POSITIVE_INFINITY)
    expect(reserved).toBe(20 * GiB + 0.2 * 5 * GiB)
    expect(releasable).toBe(0)
    const stepBound = reservation(step({ stepPeak: 24 * GiB, stepTemporaries: 2 * GiB }), 0.2, Infinity)
    expect(stepBound.reserved).toBe(24 * GiB + 0.2 * 2 * GiB)
  })

  it('keeps the activations cached beside the optimizer step when their blocks are smaller than a gradient', () => {
    const small = step({ activationBlock: 50 * MiB, gradientBlock: 100 * MiB })
    const { reserved, releasable } = reservation(small, 0.2, Infinity)
    expect(reserved).toBe(18 * GiB + 4 * GiB)
    // Only what exceeds the larger phase's own reservation is releasable.
    expect(releasable).toBe(22 * GiB - (20 * GiB + GiB))
    expect(reservation({ ...small, gradientBlock: 50 * MiB }, 0.2, Infinity).releasable).toBe(0)
    // Apple's MPS allocator and host memory do not keep CUDA-style segments.
    expect(reservation({ ...small, segmentCache: false }, 0.2, Infinity).reserved).toBe(21 * GiB)
  })

  it('holds the cached blocks to the room the device has, and never less than the phases need', () => {
    const small = step({ activationBlock: 50 * MiB, gradientBlock: 100 * MiB })
    for (const room of [10, 20, 21, 21.5, 22, 30].map((g) => g * GiB)) {
      const { reserved, releasable } = reservation(small, 0.2, room)
      expect(reserved - releasable).toBe(21 * GiB)
      expect(reserved).toBe(Math.max(21 * GiB, Math.min(22 * GiB, room)))
    }
  })
})
