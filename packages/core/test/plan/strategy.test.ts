import { describe, expect, it } from 'vitest'
import { validShardingOffload } from '../../src/plan/search.js'
import { strategyFor, strategyProblem } from '../../src/plan/strategy.js'
import type { Offload, Sharding } from '../../src/schemas/common.js'
import type { Settings } from '../../src/schemas/training-plan.js'

const why = (s: Parameters<typeof strategyProblem>[0]) => strategyProblem(s)?.message ?? null

const SHARDINGS: Sharding[] = ['none', 'zero1', 'zero2', 'zero3', 'fsdp']
const OFFLOADS: Offload[] = ['none', 'optimizer', 'all']
const STRATEGIES: Settings['strategy'][] = [
  'single',
  'ddp',
  'zero',
  'zero-offload',
  'fsdp',
  'model-split',
  'cpu',
]

describe('strategyFor and strategyProblem', () => {
  it('accept exactly the strategy the planner derives for every runnable GPU layout', () => {
    for (const gpus of [1, 2, 4, 8])
      for (const nodes of [1, 2])
        for (const sharding of SHARDINGS)
          for (const offload of OFFLOADS) {
            if (!validShardingOffload(sharding, offload, gpus * nodes)) continue
            const derived = strategyFor({ device: 'cuda', gpus, nodes, sharding, offload, modelSplit: false })
            for (const strategy of STRATEGIES.filter((s) => s !== 'cpu' && s !== 'model-split')) {
              const problem = why({ strategy, sharding, offload, gpus, nodes })
              expect(problem === null, `${strategy} ${sharding} ${offload} ${gpus}x${nodes}`).toBe(
                strategy === derived,
              )
            }
          }
  })

  it('names one GPU with ZeRO and offload zero-offload, and refuses sharding without offload on one GPU', () => {
    const shape = { device: 'cuda' as const, gpus: 1, nodes: 1, modelSplit: false }
    expect(strategyFor({ ...shape, sharding: 'zero3', offload: 'all' })).toBe('zero-offload')
    expect(strategyFor({ ...shape, sharding: 'zero2', offload: 'optimizer' })).toBe('zero-offload')
    expect(strategyFor({ ...shape, gpus: 1, nodes: 2, sharding: 'zero2', offload: 'optimizer' })).toBe(
      'zero-offload',
    )
    expect(why({ strategy: 'single', sharding: 'zero3', offload: 'all', gpus: 1, nodes: 1 })).toMatch(
      /zero3 does not go with strategy single/,
    )
    expect(why({ strategy: 'zero', sharding: 'zero3', offload: 'none', gpus: 1, nodes: 1 })).toMatch(
      /single GPU shards nothing/,
    )
    expect(why({ strategy: 'zero-offload', sharding: 'zero3', offload: 'none', gpus: 1, nodes: 1 })).toMatch(
      /needs optimizer or parameter offload/,
    )
    expect(
      why({ strategy: 'zero-offload', sharding: 'zero2', offload: 'optimizer', gpus: 4, nodes: 1 }),
    ).toMatch(/one GPU per node/)
    expect(why({ strategy: 'fsdp', sharding: 'fsdp', offload: 'none', gpus: 1, nodes: 1 })).toMatch(
      /single GPU/,
    )
  })

  it('places CPU and model-split plans by device and placement', () => {
    const base = { gpus: 0, nodes: 1, sharding: 'none' as const, offload: 'none' as const }
    expect(strategyFor({ ...base, device: 'cpu', modelSplit: false })).toBe('cpu')
    expect(strategyFor({ ...base, gpus: 1, device: 'cuda', modelSplit: true })).toBe('model-split')
    expect(why({ ...base, strategy: 'cpu' })).toBeNull()
  })
})
