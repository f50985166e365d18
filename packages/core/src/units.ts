import { RigfitError } from './errors.js'

const DURATION_UNITS: Record<string, number> = { s: 1 / 3600, m: 1 / 60, min: 1 / 60, h: 1, d: 24, w: 168 }

/** Parses a duration such as `90m`, `6h`, `1.5d` or a bare number of hours into hours. */
export function parseDurationHours(text: string, flag = '--time-budget'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)?\s*$/i.exec(text)
  const value = match ? Number(match[1]) : Number.NaN
  const unit = (match?.[2] ?? 'h').toLowerCase()
  const hours = value * (DURATION_UNITS[unit] ?? Number.NaN)
  if (!Number.isFinite(hours) || hours <= 0) {
    throw new RigfitError('usage', 'E_BAD_DURATION', `${flag} "${text}" is not a duration.`, {
      suggestion: `Write a number with a unit: 90m, 6h, 2d (a bare number means hours).`,
    })
  }
  return hours
}

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  p: 1e15,
  pb: 1e15,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
  pib: 2 ** 50,
}

/**
 * Parses a size such as `500MB`, `800M`, `20GiB`, `1.5 TB` or a bare number of bytes into bytes: decimal units
 * (a bare `K`/`M`/`G`/`T`/`P` too), binary ones with `iB`. Every flag that takes a size uses this one parser.
 */
export function parseSizeBytes(text: string, flag = '--dataset-size'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgtp]i?b|[kmgtp]|b)?\s*$/i.exec(text)
  const value = match ? Number(match[1]) : Number.NaN
  const bytes = value * (SIZE_UNITS[(match?.[2] ?? 'b').toLowerCase()] ?? Number.NaN)
  if (!Number.isFinite(bytes) || Math.round(bytes) <= 0) {
    throw new RigfitError('usage', 'E_BAD_SIZE', `${flag} "${text}" is not a size.`, {
      suggestion: 'Write a number with a unit: 800MB (or 800M), 20GB, 1.5TB, 8GiB, or a plain byte count.',
    })
  }
  return Math.round(bytes)
}

const COUNT_UNITS: Record<string, number> = { '': 1, k: 1e3, m: 1e6, b: 1e9, t: 1e12 }

/** The largest count a flag takes: a quadrillion tokens is far past any dataset. */
const MAX_COUNT = 1e15

/**
 * Parses a count such as `50k`, `1.5M`, `20B`, `2T`, `50,000` or `50_000` (tokens, examples): decimal suffixes,
 * B for billions as in "20B tokens". The result is a whole number from 1 to 10^15.
 */
export function parseCount(text: string, flag: string): number {
  const match = /^\s*(\d+(?:[.,_]\d+)*)\s*([kmbt])?\s*$/i.exec(text)
  const digits = match?.[1] ?? ''
  // Thousands separators (50,000 and 50_000) are dropped; a single dot is a decimal point (1.5M).
  const plain = /^\d{1,3}([,_]\d{3})+$/.test(digits) ? digits.replace(/[,_]/g, '') : digits
  const value = /[,_]/.test(plain) ? Number.NaN : Number(plain)
  const count = Math.round(value * (COUNT_UNITS[(match?.[2] ?? '').toLowerCase()] ?? Number.NaN))
  if (!Number.isFinite(count) || count < 1 || count > MAX_COUNT) {
    throw new RigfitError('usage', 'E_BAD_COUNT', `${flag} "${text}" is not a count from 1 to 10^15.`, {
      suggestion:
        'Write a whole number, with k, M, B or T for thousands, millions, billions, trillions: 50k, 20B.',
    })
  }
  return count
}

/** The most memory `--vram` and `--ram` take: a million GiB, about the 1 PiB the estimator stops at. */
export const MAX_MEMORY_GIB = 1e6

/**
 * Parses `--vram` or `--ram`: a plain number of GiB (24, 15.5), above 0 and at most a million. Every command
 * that takes them parses them here, so they accept and refuse the same values.
 */
export function parseGiB(text: string, flag: '--vram' | '--ram'): number {
  const value = Number(text)
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || value > MAX_MEMORY_GIB) {
    throw new RigfitError('usage', 'E_USAGE', `${flag} "${text}" is not a positive number of GiB`, {
      suggestion:
        flag === '--vram'
          ? 'Write the memory per GPU in GiB, e.g. --vram 24.'
          : 'Write the RAM of the machine in GiB, e.g. --ram 16.',
    })
  }
  return value
}

/** Bytes as GiB with one decimal, without the unit ("14.4"): how plans and warnings write memory. */
export function gibText(bytes: number): string {
  return (bytes / 2 ** 30).toFixed(1)
}

/**
 * Bytes of raw UTF-8 text per token when no tokenizer is at hand: about 4 for English text under the BPE
 * vocabularies of current LLMs (GPT-2 through Llama 3). `--dataset-size`, a dataset file counted without a
 * tokenizer, and the exporters' streaming figures all use it, so that the three agree.
 */
export const TEXT_BYTES_PER_TOKEN = 4

/** A count at a scale that shows it: 1.20T, 12.5B, 950K, 42. */
export function fmtCount(value: number): string {
  if (value >= 1e12) return `${(value / 1e12).toFixed(2)}T`
  if (value >= 1e9) return `${(value / 1e9).toFixed(value >= 1e10 ? 1 : 2)}B`
  if (value >= 1e6) return `${(value / 1e6).toFixed(value >= 1e7 ? 0 : 1)}M`
  if (value >= 1e3) return `${(value / 1e3).toFixed(value >= 1e4 ? 0 : 1)}K`
  return `${Math.round(value)}`
}

/** A duration: 45 min, 12.5 h, 3.2 days; `unbounded` when it never ends. */
export function fmtHours(hours: number): string {
  if (!Number.isFinite(hours)) return 'unbounded'
  if (hours < 1) return `${Math.max(1, Math.round(hours * 60))} min`
  if (hours < 48) return `${hours.toFixed(1)} h`
  return `${(hours / 24).toFixed(1)} days`
}
