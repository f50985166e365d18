import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { freedBlockServes, reservation } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { onPath, REPO } from './helpers/engines.js'

const MiB = 2 ** 20
const SCRIPT = join(REPO, 'examples/calibrate/caching_allocator.py')

interface Held {
  peakReservedBytes: number
  peakAllocatedBytes: number
  reservedBytes: number
  allocatedBytes: number
}

/** Replays [key, bytes] pairs (negative bytes free the key) through the script, as a user pipes a stream in. */
function replay(requests: [number, number][]): Held {
  const run = spawnSync(onPath('python3') ?? 'python3', [SCRIPT], {
    input: JSON.stringify(requests),
    encoding: 'utf8',
  })
  expect(run.status, run.stderr).toBe(0)
  return JSON.parse(run.stdout) as Held
}

const allocate = (sizes: number[]): [number, number][] => sizes.map((size, key) => [key, size])

// The rules of PyTorch's CUDA caching allocator with its defaults (c10/cuda/CUDACachingAllocator.cpp): what
// torch.cuda.max_memory_reserved() reports for a stream of requests follows from them alone.
describe('the CUDA caching allocator replayed on a stream of requests', () => {
  it('rounds every request up to 512 bytes and carves requests up to 1 MiB from 2 MiB segments', () => {
    for (const size of [1, 511, 512, 513, 100_000, MiB]) {
      const held = replay([[0, size]])
      expect(held.allocatedBytes % 512, `${size}`).toBe(0)
      expect(held.allocatedBytes - size, `${size}`).toBeLessThan(512)
      expect(held.reservedBytes, `${size}`).toBe(2 * MiB)
    }
    // As many 512 KiB requests as fill one small segment share it.
    expect(replay(allocate([512 * 1024, 512 * 1024, 512 * 1024, 512 * 1024])).reservedBytes).toBe(2 * MiB)
  })

  it('carves requests between 1 and 10 MiB from 20 MiB segments, and gives larger ones a segment of their own', () => {
    expect(replay(allocate([4 * MiB, 4 * MiB, 4 * MiB])).reservedBytes).toBe(20 * MiB)
    expect(replay(allocate([4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB])).reservedBytes).toBe(
      40 * MiB,
    )
    for (const size of [10 * MiB, 10 * MiB + 1, 33 * MiB, 1000 * MiB + 7]) {
      expect(replay([[0, size]]).reservedBytes, `${size}`).toBe(Math.ceil(size / (2 * MiB)) * 2 * MiB)
    }
  })

  it('serves a request from the smallest free block that holds it, splitting off the rest', () => {
    // 30 and 50 MiB freed: 30 MiB takes the 30 MiB block, which leaves the 50 MiB block whole for 50 MiB.
    const held = replay([
      [0, 30 * MiB],
      [1, 50 * MiB],
      [0, -1],
      [1, -1],
      [2, 30 * MiB],
      [3, 50 * MiB],
    ])
    expect(held.reservedBytes).toBe(80 * MiB)
    // The 50 MiB block serves 20 and 30 MiB, split, with no new segment.
    expect(
      replay([
        [0, 50 * MiB],
        [0, -1],
        [1, 20 * MiB],
        [2, 30 * MiB],
      ]).reservedBytes,
    ).toBe(50 * MiB)
  })

  it('keeps a freed block that no later request fits in: a larger request takes a new segment', () => {
    const held = replay([
      [0, 30 * MiB],
      [0, -1],
      [1, 50 * MiB],
    ])
    expect(held.peakAllocatedBytes).toBe(50 * MiB)
    expect(held.peakReservedBytes).toBe(80 * MiB)
  })

  it('merges a freed block with free neighbours of its segment, and never across segments', () => {
    // Two 4 MiB blocks and the 12 MiB rest of their 20 MiB segment merge back into 20 MiB once both are freed.
    const merged = replay([
      [0, 4 * MiB],
      [1, 4 * MiB],
      [0, -1],
      [1, -1],
      [2, 9 * MiB],
      [3, 9 * MiB],
    ])
    expect(merged.reservedBytes).toBe(20 * MiB)
    // Two 12 MiB segments freed side by side are still two blocks: 24 MiB needs a segment of its own.
    const apart = replay([
      [0, 12 * MiB],
      [1, 12 * MiB],
      [0, -1],
      [1, -1],
      [2, 24 * MiB],
    ])
    expect(apart.reservedBytes).toBe(48 * MiB)
  })

  it('does not split a large block for a remainder of 1 MiB or less: the request holds the whole block', () => {
    const held = replay([
      [0, 12 * MiB],
      [0, -1],
      [1, 12 * MiB - 512 * 1024],
    ])
    expect(held.allocatedBytes).toBe(12 * MiB)
    expect(
      replay([
        [0, 12 * MiB],
        [0, -1],
        [1, 10 * MiB],
      ]).allocatedBytes,
    ).toBe(10 * MiB)
  })

  it('agrees with the estimator on which freed block serves which later request', () => {
    const sizes = [0.5, 1, 1.5, 4, 9.5, 12, 19, 20, 21, 44, 96].map((m) => m * MiB)
    for (const freed of sizes)
      for (const request of sizes) {
        const held = replay([
          [0, freed],
          [0, -1],
          [1, request],
        ])
        const served = held.peakReservedBytes === replay([[0, freed]]).reservedBytes
        expect(served, `${freed / MiB} MiB freed, ${request / MiB} MiB asked`).toBe(
          freedBlockServes(freed, request),
        )
      }
  })

  it('reserves what the estimator does when the optimizer step follows backward', () => {
    // Six saved activations freed by backward, then six gradients: shared blocks when the activations are at
    // least as large, both sets of segments side by side when they are not.
    for (const activation of [12, 16, 44, 96].map((m) => m * MiB))
      for (const gradient of [12, 22, 44, 64].map((m) => m * MiB)) {
        const stream: [number, number][] = [
          ...allocate(Array(6).fill(activation)),
          ...Array.from({ length: 6 }, (_, key): [number, number] => [key, -1]),
          ...Array.from({ length: 6 }, (_, key): [number, number] => [6 + key, gradient]),
        ]
        const predicted = reservation(
          {
            backwardPeak: 6 * activation,
            backwardChurn: 6 * activation,
            stepPeak: 6 * gradient,
            stepTemporaries: 0,
            activations: 6 * activation,
            activationBlock: activation,
            gradientBlock: gradient,
            segmentCache: true,
          },
          0,
          Number.POSITIVE_INFINITY,
        )
        expect(replay(stream).peakReservedBytes, `${activation / MiB} / ${gradient / MiB} MiB`).toBe(
          predicted.reserved,
        )
      }
  })

  it('refuses input that is not a list of [key, bytes] pairs, saying so', () => {
    const run = spawnSync(onPath('python3') ?? 'python3', [SCRIPT], { input: '{"a": 1}', encoding: 'utf8' })
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(/not a JSON list of \[key, bytes\] pairs/)
  })
})
