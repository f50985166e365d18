import { RigfitError } from '../errors.js'
import { editDistance } from '../model/close-matches.js'
import type { GpuCatalogEntry } from '../schemas/gpu-catalog.js'
import { GPU_NAME_NOISE } from './gpu-name.js'

/** This many names are suggested, and those exactly as close as the last of them (up to MAX_TIED in all). */
const SUGGESTIONS = 3
const MAX_TIED = 8
/** A catalog token the query does not mention costs this much: users leave out form factors and sizes. */
const UNMENTIONED_TOKEN_COST = 0.3
/** Close means within 2 edits, or 40% of what was typed for long names: beyond that a name is a different GPU. */
const NEAR_EDITS = 2
const NEAR_FRACTION = 0.4

/** One way of writing a name: its lower-case words, and those words joined by single spaces. */
interface Spelling {
  text: string
  tokens: string[]
}

function spellings(name: string): Spelling[] {
  const words = name
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '')
  // Typos may fall in a vendor word ("GeFroce RTX 4090") or the user may leave vendor words out ("RTX 4090"):
  // compare both with and without them.
  const meaningful = words.filter((word) => !GPU_NAME_NOISE.has(word))
  const forms = [words, meaningful].filter((tokens) => tokens.length > 0)
  return forms.map((tokens) => ({ text: tokens.join(' '), tokens }))
}

const spellingCache = new WeakMap<GpuCatalogEntry, Spelling[]>()

function spellingsOf(entry: GpuCatalogEntry): Spelling[] {
  let cached = spellingCache.get(entry)
  if (!cached) {
    cached = [entry.name, ...entry.aliases].flatMap(spellings)
    spellingCache.set(entry, cached)
  }
  return cached
}

/**
 * How far what a user typed is from a way of writing a catalog name: the smaller of the edit distance between
 * the whole strings (a typo anywhere, a missing space) and a word-by-word distance (each typed word against its
 * closest catalog word, plus a little for each catalog word left unsaid: "H100" for "H100 SXM5 80GB").
 */
function distance(query: Spelling, candidate: Spelling): number {
  const whole = editDistance(query.text, candidate.text)
  let words = 0
  for (const token of query.tokens) words += Math.min(...candidate.tokens.map((c) => editDistance(token, c)))
  const unsaid = candidate.tokens.filter((token) => !query.tokens.includes(token)).length
  return Math.min(whole, words + unsaid * UNMENTIONED_TOKEN_COST)
}

function commonPrefix(a: string, b: string): number {
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return n
}

/**
 * The catalog entries whose names (or tool spellings) are closest to a GPU name that matched none, best first:
 * the closest few by edit distance and word similarity ("RTX 4080 Supr" -> GeForce RTX 4080 SUPER). When nothing
 * is close, entries sharing a word with the query, closest first; none when nothing is shared either.
 */
export function suggestGpus(query: string, entries: readonly GpuCatalogEntry[]): GpuCatalogEntry[] {
  const typed = spellings(query)
  if (typed.length === 0) return []
  const typedWords = new Set(typed.flatMap((spelling) => spelling.tokens))
  const scored = entries.map((entry, index) => {
    const written = spellingsOf(entry)
    let best = Number.POSITIVE_INFINITY
    let prefix = 0
    for (const q of typed) {
      for (const c of written) {
        best = Math.min(best, distance(q, c))
        prefix = Math.max(prefix, commonPrefix(q.text, c.text))
      }
    }
    const shares = written.some((c) => c.tokens.some((token) => typedWords.has(token)))
    return { entry, index, best, prefix, shares }
  })
  // Equally distant names: the one that starts the way the query does first ("RTX 5O90": 5080 before 3090).
  scored.sort((a, b) => a.best - b.best || b.prefix - a.prefix || a.index - b.index)
  const queryLength = Math.max(...typed.map((spelling) => spelling.text.length))
  const near = scored.filter((s) => s.best <= Math.max(NEAR_EDITS, queryLength * NEAR_FRACTION))
  const pool = near.length > 0 ? near : scored.filter((s) => s.shares)
  const last = pool[Math.min(SUGGESTIONS, pool.length) - 1]
  if (!last) return []
  // Names exactly as close as the last one shown are shown too: which of them was meant cannot be told.
  const chosen = pool.filter((s, index) => index < SUGGESTIONS || s.best === last.best).slice(0, MAX_TIED)
  return chosen.map((s) => s.entry)
}

/**
 * The error for a GPU name no catalog entry matches: it names what was typed (and the flag it came from) and
 * suggests the closest catalog names. `code` keeps each command's published error code; `hint` adds what else
 * the command accepts.
 */
export function unknownGpuError(
  query: string,
  entries: readonly GpuCatalogEntry[],
  options: { code?: string; flag?: string; hint?: string } = {},
): RigfitError {
  const names = suggestGpus(query, entries).map((entry) => entry.name)
  const known = `in the GPU catalog (${entries.length} models known)`
  const message = options.flag
    ? `${options.flag} "${query}": no GPU of that name ${known}.`
    : `No GPU named "${query}" ${known}.`
  const didYouMean =
    names.length > 0
      ? `Did you mean: ${names.join(', ')}?`
      : 'Name the GPU as its spec sheet or nvidia-smi does, e.g. "RTX 4090" or "A100 80GB".'
  return new RigfitError('input', options.code ?? 'E_UNKNOWN_GPU', message, {
    suggestion: options.hint ? `${didYouMean} ${options.hint}` : didYouMean,
    details: { gpu: query, closeMatches: names },
  })
}
