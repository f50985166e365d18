import { RigfitError } from '@rigfit/core'

const UNITS: Record<string, number> = {
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

/** Parses sizes such as `500GB`, `1.5 TiB`, `800M` or a plain byte count; decimal units unless `iB`. */
export function parseByteSize(text: string, flag = '--dataset-size'): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text)
  const unit = UNITS[(match?.[2] ?? '').toLowerCase() || 'b']
  if (!match?.[1] || unit === undefined) {
    throw new RigfitError('usage', 'E_SIZE', `${flag} "${text}" is not a size`, {
      suggestion: 'Write a number with a unit: 800MB, 50GB, 1.5TB, 2TiB (or a plain byte count).',
    })
  }
  const bytes = Math.round(Number.parseFloat(match[1]) * unit)
  if (bytes <= 0) throw new RigfitError('usage', 'E_SIZE', `${flag} must be larger than zero`)
  return bytes
}
