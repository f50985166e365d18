import type { GpuCatalogEntry } from '../schemas/gpu-catalog.js'
import { type GpuNameKey, parseGpuName, sameModel } from './gpu-name.js'

export type { GpuCatalogEntry }

export interface GpuMatch {
  entry: GpuCatalogEntry
  /** exact: the name or a tool alias, letter for letter; normalized: the same model once vendor words and
   *  spelling are set aside; vram: several variants matched the name and the memory size chose one. */
  matchedBy: 'exact' | 'normalized' | 'vram'
  /** Other variants the name fits equally well (A100 40 GB and 80 GB for "A100"): the entry was assumed. */
  alternatives: GpuCatalogEntry[]
}

const GIB = 1024 ** 3
/** nvidia-smi reports 39.6 GiB for a 40 GB A100 and 15 GiB for a 16 GB T4; ECC and reserved memory account for it. */
const VRAM_TOLERANCE = 0.15

const keyCache = new WeakMap<GpuCatalogEntry, { keys: GpuNameKey[]; own: GpuNameKey }>()

function keysOf(entry: GpuCatalogEntry): { keys: GpuNameKey[]; own: GpuNameKey } {
  let cached = keyCache.get(entry)
  if (!cached) {
    const own = parseGpuName(entry.name)
    cached = { own, keys: [own, ...entry.aliases.map(parseGpuName)] }
    keyCache.set(entry, cached)
  }
  return cached
}

/**
 * Finds the catalog entry for a GPU name as nvidia-smi, rocm-smi or system_profiler print it, or as a user types
 * it ("A100 80GB", "4090", "RTX 3060 12GB"). Memory size and form factor in the name narrow the candidates; the
 * reported memory (`vramBytes`, for Apple the unified memory) tells apart variants the name does not (A100 40 vs
 * 80 GB, RTX 4060 Ti 8 vs 16 GB). Where nothing tells variants apart the first in catalog order wins. Returns
 * null rather than a guess when the name says something no entry has (a laptop GPU, an H100 NVL).
 */
export function matchGpu(
  query: string,
  vramBytes: number | null,
  entries: GpuCatalogEntry[],
): GpuMatch | null {
  const wanted = query.trim().replace(/\s+/g, ' ').toLowerCase()
  if (wanted === '') return null
  const exact = entries.filter(
    (entry) =>
      entry.name.toLowerCase() === wanted || entry.aliases.some((alias) => alias.toLowerCase() === wanted),
  )
  if (exact.length > 0) return pick(exact, 'exact', vramBytes)

  const key = parseGpuName(query)
  const candidates = entries.filter((entry) => {
    const { keys, own } = keysOf(entry)
    if (!keys.some((candidate) => sameModel(key.tokens, candidate.tokens))) return false
    if (key.memoryGB !== null && Math.abs(entry.vramGB - key.memoryGB) > 0.5) return false
    if (key.form !== null && own.form !== null && own.form !== key.form) return false
    if (key.form !== null && key.form !== own.form && siblingsHaveForms(entry, entries)) return false
    if (key.gpuCores !== null && own.gpuCores !== null && own.gpuCores !== key.gpuCores) return false
    return true
  })
  return pick(candidates, 'normalized', vramBytes)
}

/** A form factor the entry's own name does not state only passes when its model comes in no stated form at all. */
function siblingsHaveForms(entry: GpuCatalogEntry, entries: GpuCatalogEntry[]): boolean {
  const tokens = keysOf(entry).own.tokens
  return entries.some((other) => {
    const own = keysOf(other).own
    return own.form !== null && sameModel(tokens, own.tokens)
  })
}

function pick(
  candidates: GpuCatalogEntry[],
  how: 'exact' | 'normalized',
  vramBytes: number | null,
): GpuMatch | null {
  const [first] = candidates
  if (!first) return null
  if (candidates.length === 1 || vramBytes === null || vramBytes <= 0)
    return { entry: first, matchedBy: how, alternatives: candidates.slice(1) }
  const reportedGiB = vramBytes / GIB
  const scored = candidates.map((entry) => ({ entry, distance: vramDistance(entry, reportedGiB) }))
  const best = Math.min(...scored.map((s) => s.distance))
  const winners = scored.filter((s) => s.distance === best)
  const decisive = scored.some((s) => s.distance !== best)
  const winner = (winners[0] ?? scored[0])?.entry ?? first
  return {
    entry: winner,
    matchedBy: decisive ? 'vram' : how,
    alternatives: winners.map((w) => w.entry).filter((entry) => entry !== winner),
  }
}

/**
 * How far the reported memory is from an entry's. A discrete board reports (almost) its own size; an Apple chip
 * reports the machine's unified memory, which any configuration up to the chip's maximum can have, so there the
 * smallest maximum that still holds the reported memory fits best.
 */
function vramDistance(entry: GpuCatalogEntry, reportedGiB: number): number {
  if (entry.unifiedMemory) {
    return reportedGiB <= entry.vramGB * 1.05 ? (entry.vramGB - reportedGiB) / entry.vramGB : 1 + reportedGiB
  }
  const perDevice = entry.vramGB / (entry.devicesPerBoard ?? 1)
  const relative = Math.abs(perDevice - reportedGiB) / perDevice
  return relative <= VRAM_TOLERANCE ? Math.round(relative * 1000) / 1000 : 1 + relative
}
