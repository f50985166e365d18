import type { TrainingPlan } from '../../schemas/training-plan.js'
import { processesPerNode } from '../batch.js'
import {
  datasetSize,
  fastestStorageWithRoom,
  formatBytes,
  type IoFacts,
  RAW_TEXT_BYTES_PER_TOKEN,
  tokenizedBytesPerToken,
} from './io-facts.js'

/** Bandwidth must exceed the need by this factor: the rate varies, and a stall idles every GPU. */
export const BANDWIDTH_HEADROOM = 2
/** Pre-download when fetching the dataset takes at most this share of the training time. */
export const PREDOWNLOAD_TIME_SHARE = 0.1
/** Extra batches each worker keeps in flight when reads have high latency (network, HDD). */
export const HIGH_LATENCY_PREFETCH = 4

export interface StreamingDecision {
  mode: 'stream' | 'pre-download'
  datasetBytes: number
  datasetBytesSource: 'flag' | 'file' | 'token-budget'
  /** Tokens per second one node consumes. */
  tokensPerSecondPerNode: number
  /** Raw text over the network, in MB/s, per node. */
  requiredNetworkMBs: number
  /** Tokenized shards from local disk, in MB/s, per node. */
  requiredDiskMBs: number
  networkMBs: number | null
  disk: { mount: string; kind: string; readMBs: number | null } | null
  downloadHours: number | null
  workers: number
  prefetchFactor: number
  reasons: string[]
}

const mbs = (v: number) => `${v < 10 ? v.toFixed(2) : Math.round(v)} MB/s`

/**
 * Stream or pre-download, from measured disk and network bandwidth against what the plan consumes
 * (tokens/s x bytes per token): pre-download when the data fits on a local disk and arrives in a small share
 * of the run (or the network is too slow to stream); stream when it does not fit and the network keeps up.
 */
export function decideStreaming(
  plan: TrainingPlan,
  facts: IoFacts,
  datasetBytes: number | null,
): StreamingDecision {
  const s = plan.settings
  const need = readNeed(plan, facts, datasetBytes)
  const { dataset, local, requiredDiskMBs } = need
  const reasons = [...need.reasons]
  const where = streamOrFetch(plan, facts, need)
  const { mode } = where
  reasons.push(...where.reasons)
  const loader = loaderFor(s, facts, mode, local?.kind === 'hdd')
  reasons.push(loader.reason)
  const { workers, prefetchFactor } = loader
  const disk = mode === 'pre-download' ? local : null
  if (disk?.readMBs != null && disk.readMBs < BANDWIDTH_HEADROOM * requiredDiskMBs) {
    reasons.push(
      `${disk.mount} reads ${mbs(disk.readMBs)}, under ${BANDWIDTH_HEADROOM}x the ${mbs(requiredDiskMBs)} needed: cache the dataset in RAM or on NVMe.`,
    )
  }
  return {
    mode,
    datasetBytes: dataset.bytes,
    datasetBytesSource: dataset.source,
    tokensPerSecondPerNode: need.perNode,
    requiredNetworkMBs: need.requiredNetworkMBs,
    requiredDiskMBs,
    networkMBs: facts.networkMBs,
    disk: disk ? { mount: disk.mount, kind: disk.kind, readMBs: disk.readMBs } : null,
    downloadHours: where.downloadHours,
    workers,
    prefetchFactor,
    reasons,
  }
}

/** What the run reads per node, as raw text and as token ids, the dataset's size, and the disk with room for it. */
function readNeed(plan: TrainingPlan, facts: IoFacts, datasetBytes: number | null) {
  const s = plan.settings
  const dataset = datasetSize(plan, datasetBytes)
  const perNode = plan.throughput.tokensPerSecond / s.nodes
  const requiredNetworkMBs = (perNode * RAW_TEXT_BYTES_PER_TOKEN) / 1e6
  const requiredDiskMBs = (perNode * tokenizedBytesPerToken(plan)) / 1e6
  const local = fastestStorageWithRoom(facts, dataset.bytes * 1.1)
  const reasons: string[] = [
    `The run reads ${Math.round(perNode).toLocaleString('en-US')} tokens/s per node: ${mbs(requiredNetworkMBs)} of raw text (~${RAW_TEXT_BYTES_PER_TOKEN} B/token) or ${mbs(requiredDiskMBs)} of ${tokenizedBytesPerToken(plan) * 8}-bit token ids.`,
    dataset.source === 'flag'
      ? `Dataset: ${formatBytes(dataset.bytes)} (--dataset-size).`
      : dataset.source === 'file'
        ? `Dataset: ${formatBytes(dataset.bytes)} (${plan.workload.dataset?.path}).`
        : `Dataset: ${formatBytes(dataset.bytes)}, one pass over the ${plan.tokens.budget.toLocaleString('en-US')}-token budget as raw text (pass --dataset-size for the real figure).`,
  ]
  return { dataset, perNode, requiredNetworkMBs, requiredDiskMBs, local, reasons }
}
type ReadNeed = ReturnType<typeof readNeed>

/** Stream or pre-download, from the network rate against the need and the download's share of the run. */
function streamOrFetch(plan: TrainingPlan, facts: IoFacts, need: ReadNeed) {
  const { dataset, local, requiredNetworkMBs } = need
  const reasons: string[] = []
  const networkOk = facts.networkMBs !== null && facts.networkMBs >= BANDWIDTH_HEADROOM * requiredNetworkMBs
  const downloadHours =
    facts.networkMBs === null || facts.networkMBs <= 0
      ? null
      : dataset.bytes / (facts.networkMBs * 1e6) / 3600

  let mode: StreamingDecision['mode']
  if (facts.networkMBs === null) {
    reasons.push('Network bandwidth was not measured (rigfit profile --benchmark measures it).')
    mode = local || facts.storage.length === 0 ? 'pre-download' : 'stream'
    reasons.push(
      mode === 'pre-download'
        ? 'Pre-download: local reads are the safe default when the network rate is unknown.'
        : 'Stream: no local disk has room for the dataset.',
    )
  } else if (
    local &&
    downloadHours !== null &&
    (downloadHours <= PREDOWNLOAD_TIME_SHARE * plan.time.totalHours || !networkOk)
  ) {
    mode = 'pre-download'
    reasons.push(
      networkOk
        ? `Pre-download to ${local.mount}: ${downloadHours.toFixed(2)} h at ${mbs(facts.networkMBs)} is within ${PREDOWNLOAD_TIME_SHARE * 100}% of the ${plan.time.totalHours.toFixed(1)} h run.`
        : `Pre-download to ${local.mount}: the network (${mbs(facts.networkMBs)}) is below ${BANDWIDTH_HEADROOM}x the streaming need, so fetch first (${downloadHours.toFixed(1)} h).`,
    )
  } else if (networkOk) {
    mode = 'stream'
    reasons.push(
      local
        ? `Stream: downloading takes ${downloadHours?.toFixed(1)} h, more than ${PREDOWNLOAD_TIME_SHARE * 100}% of the run, and ${mbs(facts.networkMBs)} covers ${BANDWIDTH_HEADROOM}x the need.`
        : `Stream: no local disk has room for ${formatBytes(dataset.bytes)}, and ${mbs(facts.networkMBs)} covers ${BANDWIDTH_HEADROOM}x the need.`,
    )
  } else {
    mode = 'stream'
    const bound = (facts.networkMBs * 1e6) / RAW_TEXT_BYTES_PER_TOKEN
    reasons.push(
      `Stream, network-bound: no local disk has room and ${mbs(facts.networkMBs)} limits the run to about ${Math.round(bound).toLocaleString('en-US')} tokens/s per node.`,
    )
  }
  return { mode, downloadHours, reasons }
}

/** The loader's workers and prefetch: more requests in flight for high-latency reads (network, HDD). */
function loaderFor(
  s: TrainingPlan['settings'],
  facts: IoFacts,
  mode: StreamingDecision['mode'],
  slowLocal: boolean,
): { workers: number; prefetchFactor: number; reason: string } {
  const base = s.dataloader.workers
  const basePrefetch = s.dataloader.prefetchFactor ?? 2
  const coresPerProcess =
    facts.usableCores === null
      ? Number.POSITIVE_INFINITY
      : Math.max(1, Math.floor(facts.usableCores / processesPerNode(s)) - 1)
  if (mode === 'stream' || slowLocal) {
    // High-latency reads need more requests in flight: at least two workers, deeper prefetch.
    const workers = Math.min(Math.max(base, 2), coresPerProcess)
    const prefetchFactor = Math.max(basePrefetch, HIGH_LATENCY_PREFETCH)
    return {
      workers,
      prefetchFactor,
      reason: `Loader: ${workers} workers, prefetch ${prefetchFactor} per worker to hide ${mode === 'stream' ? 'network' : 'disk seek'} latency.`,
    }
  }
  return {
    workers: base,
    prefetchFactor: basePrefetch,
    reason: `Loader: the plan's ${base} workers and prefetch ${basePrefetch} suffice for local reads.`,
  }
}
