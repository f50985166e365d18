import type { TrainingPlan } from '../../schemas/training-plan.js'
import { datasetSize, fastestStorageWithRoom, formatBytes, type IoFacts } from './io-facts.js'

/** Share of the RAM left after the run's own host memory that a dataset cache may take (the rest is page cache and OS). */
export const RAM_CACHE_SHARE = 0.5
/** Free space kept beyond the cache on its disk. */
export const DISK_SLACK = 1.1

export interface CacheDecision {
  tier: 'ram' | 'nvme' | 'ssd' | 'hdd' | 'disk' | 'none'
  mount: string | null
  cacheBytes: number
  datasetBytes: number
  ramBudgetBytes: number
  reasons: string[]
}

/**
 * Where to cache the dataset: RAM when it fits in half of what the run leaves free, else the fastest local disk
 * with room for it and the checkpoints (NVMe, then SSD, then HDD), else nowhere (stream it).
 */
export function sizeCache(plan: TrainingPlan, facts: IoFacts, datasetBytes: number | null): CacheDecision {
  const dataset = datasetSize(plan, datasetBytes)
  const ram = facts.ramBytes ?? plan.hardware.hostMemoryBytes
  const ramBudgetBytes = Math.max(0, Math.floor((ram - plan.memory.hostBytes) * RAM_CACHE_SHARE))
  const reasons = [
    `RAM: ${formatBytes(ram)}${facts.ramBytes === null ? ' (from the plan; no profile given)' : ''}, the run holds ${formatBytes(plan.memory.hostBytes)}; a cache may take ${Math.round(RAM_CACHE_SHARE * 100)}% of the rest: ${formatBytes(ramBudgetBytes)}.`,
  ]
  const decide = (
    tier: CacheDecision['tier'],
    mount: string | null,
    cacheBytes: number,
    why: string,
  ): CacheDecision => ({
    tier,
    mount,
    cacheBytes,
    datasetBytes: dataset.bytes,
    ramBudgetBytes,
    reasons: [...reasons, why],
  })
  if (dataset.bytes <= ramBudgetBytes) {
    return decide(
      'ram',
      null,
      dataset.bytes,
      `The ${formatBytes(dataset.bytes)} dataset fits the RAM budget: cache it in memory (page cache or an in-memory dataset).`,
    )
  }
  if (facts.storage.length === 0) {
    return decide(
      'disk',
      null,
      dataset.bytes,
      `The ${formatBytes(dataset.bytes)} dataset exceeds the RAM budget; no storage was measured, so cache it on the fastest local disk with room (pass --profile to choose).`,
    )
  }
  const needed = dataset.bytes * DISK_SLACK + plan.checkpoints.diskNeededBytes
  const disk = fastestStorageWithRoom(facts, needed)
  if (!disk) {
    return decide(
      'none',
      null,
      0,
      `No disk has ${formatBytes(needed)} free for the dataset and checkpoints: stream the dataset instead of caching it.`,
    )
  }
  const tier = disk.kind === 'unknown' ? 'disk' : disk.kind
  const speed = disk.readMBs === null ? '' : ` (reads ${Math.round(disk.readMBs)} MB/s)`
  const hddNote =
    tier === 'hdd'
      ? ' An HDD seeks slowly: store pre-shuffled, contiguous shards and read them sequentially.'
      : ''
  return decide(
    tier,
    disk.mount,
    dataset.bytes,
    `The dataset exceeds the RAM budget; ${disk.mount} (${disk.kind}${speed}) has room for it and the checkpoints.${hddNote}`,
  )
}
