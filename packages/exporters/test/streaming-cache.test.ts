import { decideStreaming, type IoFacts, NO_IO_FACTS, sizeCache } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { loadFixturePlan } from './helpers/fixture-plans.js'

const GB = 1e9
const plan = loadFixturePlan('rtx4090-bf16') // one GPU, one node; its vocabulary fits 2-byte token ids
const nvme = { mount: '/data', kind: 'nvme' as const, freeBytes: 2000 * GB, readMBs: 3000 }
const hdd = { mount: '/archive', kind: 'hdd' as const, freeBytes: 8000 * GB, readMBs: 0.3 }
const facts = (patch: Partial<IoFacts>): IoFacts => ({
  storage: [nvme],
  networkMBs: 100,
  ramBytes: 64 * GB,
  usableCores: 16,
  ...patch,
})

describe('dataset streaming', () => {
  it('computes the bandwidth the plan needs from tokens/s x bytes per token', () => {
    const d = decideStreaming(plan, facts({}), 50 * GB)
    const tokensPerSecond = plan.throughput.tokensPerSecond
    expect(plan.model.vocab).toBeLessThanOrEqual(2 ** 16)
    expect(d.requiredNetworkMBs).toBeCloseTo((tokensPerSecond * 4) / 1e6)
    expect(d.requiredDiskMBs).toBeCloseTo((tokensPerSecond * 2) / 1e6)
  })

  it('pre-downloads when the data fits locally and arrives in a small share of the run', () => {
    const d = decideStreaming(plan, facts({}), 50 * GB) // 500 s at 100 MB/s vs a ~5.8 h run
    expect(d.mode).toBe('pre-download')
    expect(d.disk?.mount).toBe('/data')
    expect(d.downloadHours).toBeCloseTo(50 / 0.1 / 3600)
    expect(d.workers).toBe(plan.settings.dataloader.workers)
  })

  it('streams when the download would take too long but the network keeps up, with deeper prefetch', () => {
    const d = decideStreaming(plan, facts({ networkMBs: 10 }), 1500 * GB)
    expect(d.mode).toBe('stream')
    expect(d.prefetchFactor).toBe(4)
    expect(d.reasons.join(' ')).toMatch(/Stream: downloading takes/)
  })

  it('streams, network-bound, when nothing fits and the network is slow', () => {
    const d = decideStreaming(
      plan,
      facts({ networkMBs: 0.5, storage: [{ ...nvme, freeBytes: 10 * GB }] }),
      500 * GB,
    )
    expect(d.mode).toBe('stream')
    expect(d.reasons.join(' ')).toMatch(/network-bound.*125,000 tokens\/s/)
  })

  it('pre-downloads when the network is too slow to stream but the disk has room', () => {
    const d = decideStreaming(plan, facts({ networkMBs: 0.5 }), 100 * GB)
    expect(d.mode).toBe('pre-download')
    expect(d.reasons.join(' ')).toMatch(/below 2x the streaming need/)
  })

  it('says what is unknown without a profile and sizes the dataset from the token budget', () => {
    const d = decideStreaming(plan, NO_IO_FACTS, null)
    expect(d.datasetBytesSource).toBe('token-budget')
    expect(d.datasetBytes).toBe(plan.tokens.budget * 4)
    expect(d.mode).toBe('pre-download')
    expect(d.reasons.join(' ')).toMatch(/not measured/)
  })

  it('sizes the dataset from the file the plan counted, unless --dataset-size says otherwise', () => {
    const counted = {
      ...plan,
      workload: {
        ...plan.workload,
        dataset: {
          path: 'data/train.jsonl',
          format: 'jsonl' as const,
          bytes: 7 * GB,
          examples: 50_000,
          tokens: 1.5e9,
          method: 'bytes-per-token' as const,
          tokenizer: null,
        },
      },
    }
    const fromFile = decideStreaming(counted, NO_IO_FACTS, null)
    expect(fromFile).toMatchObject({ datasetBytes: 7 * GB, datasetBytesSource: 'file' })
    expect(fromFile.reasons.join(' ')).toMatch(/Dataset: 7\.0 GB \(data\/train\.jsonl\)/)
    expect(decideStreaming(counted, NO_IO_FACTS, 20 * GB)).toMatchObject({ datasetBytesSource: 'flag' })
    expect(sizeCache(counted, facts({}), null).reasons.join(' ')).toMatch(/7\.0 GB/)
  })

  it('warns when the chosen disk reads slower than twice the need', () => {
    const d = decideStreaming(plan, facts({ storage: [hdd], networkMBs: null }), 50 * GB)
    expect(d.disk?.kind).toBe('hdd')
    expect(d.prefetchFactor).toBe(4)
    expect(d.reasons.join(' ')).toMatch(/\/archive reads 0\.30 MB\/s/)
  })
})

describe('cache sizing', () => {
  it('caches in RAM when the dataset fits half of what the run leaves free', () => {
    const c = sizeCache(plan, facts({}), 20 * GB) // half of (64 GB - what the run holds in RAM)
    expect(c).toMatchObject({ tier: 'ram', cacheBytes: 20 * GB })
    expect(c.ramBudgetBytes).toBe(Math.floor((64 * GB - plan.memory.hostBytes) * 0.5))
  })

  it('goes to the fastest disk with room for the dataset and the checkpoints', () => {
    expect(sizeCache(plan, facts({ storage: [hdd, nvme] }), 100 * GB)).toMatchObject({
      tier: 'nvme',
      mount: '/data',
    })
    const c = sizeCache(plan, facts({ storage: [hdd, { ...nvme, freeBytes: 50 * GB }] }), 100 * GB)
    expect(c).toMatchObject({ tier: 'hdd', mount: '/archive' })
    expect(c.reasons.join(' ')).toMatch(/pre-shuffled, contiguous shards/)
  })

  it('caches nowhere when no disk has room, and says so', () => {
    const c = sizeCache(plan, facts({ storage: [{ ...nvme, freeBytes: 10 * GB }] }), 100 * GB)
    expect(c).toMatchObject({ tier: 'none', cacheBytes: 0 })
  })

  it('falls back on the plan host memory without a profile', () => {
    const c = sizeCache(plan, NO_IO_FACTS, 100 * GB)
    expect(c.tier).toBe('disk')
    expect(c.reasons[0]).toMatch(/from the plan; no profile given/)
  })
})
