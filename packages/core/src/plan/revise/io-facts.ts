import type { ExportIoFacts } from '../../schemas/export-manifest.js'
import type { HardwareProfile, StorageKind } from '../../schemas/hardware-profile.js'
import type { TrainingPlan } from '../../schemas/training-plan.js'
import { TEXT_BYTES_PER_TOKEN } from '../../units.js'

/** What the dataset decisions need to know about a machine's storage, network and memory. */
export type IoFacts = ExportIoFacts

export const NO_IO_FACTS: IoFacts = { storage: [], networkMBs: null, ramBytes: null, usableCores: null }

export function ioFactsFromProfile(profile: HardwareProfile): IoFacts {
  return {
    storage: profile.storage.map((s) => ({
      mount: s.mount,
      kind: s.kind,
      freeBytes: s.freeBytes,
      readMBs: s.readMBs,
    })),
    networkMBs:
      profile.network.status === 'measured' && profile.network.downloadMbps !== null
        ? profile.network.downloadMbps / 8
        : null,
    ramBytes: profile.memory.usableBytes,
    usableCores: profile.cpu.usableCores,
  }
}

/** Raw UTF-8 text per BPE token: core's ratio, the one the planner reads `--dataset-size` with. */
export const RAW_TEXT_BYTES_PER_TOKEN = TEXT_BYTES_PER_TOKEN

/** Pre-tokenized shards store token ids as uint16 when the vocabulary fits, else uint32. */
export function tokenizedBytesPerToken(plan: TrainingPlan): 2 | 4 {
  return plan.model.vocab <= 65_536 ? 2 : 4
}

/** Dataset size: the user's figure, or one pass over the token budget as raw text. */
export function datasetSize(
  plan: TrainingPlan,
  datasetBytes: number | null,
): { bytes: number; source: 'flag' | 'file' | 'token-budget' } {
  if (datasetBytes !== null) return { bytes: datasetBytes, source: 'flag' }
  // The file the plan counted (`--dataset PATH`) is the dataset as it sits on disk.
  if (plan.workload.dataset) return { bytes: plan.workload.dataset.bytes, source: 'file' }
  return { bytes: plan.tokens.budget * RAW_TEXT_BYTES_PER_TOKEN, source: 'token-budget' }
}

const KIND_RANK: Record<StorageKind, number> = { nvme: 0, ssd: 1, unknown: 2, hdd: 3 }

/** The fastest storage with room for `bytes`, preferring NVMe over SSD over unknown over HDD, then more free space. */
export function fastestStorageWithRoom(facts: IoFacts, bytes: number): IoFacts['storage'][number] | null {
  const candidates = facts.storage.filter((s) => s.freeBytes >= bytes)
  candidates.sort((a, b) => KIND_RANK[a.kind] - KIND_RANK[b.kind] || b.freeBytes - a.freeBytes)
  return candidates[0] ?? null
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB']
  let value = bytes
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit += 1
  }
  return `${value >= 100 || unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`
}
