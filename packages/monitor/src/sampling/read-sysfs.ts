import { readdirSync, readFileSync } from 'node:fs'

/**
 * Small synchronous readers for /proc and /sys. They are in-memory pseudo files, so a synchronous read costs
 * microseconds and keeps the 1 Hz sampler cheap; a missing or unreadable file (hotplug, permissions) is null.
 */
export function readTrimmed(path: string): string | null {
  try {
    const value = readFileSync(path, 'utf8').trim()
    return value === '' ? null : value
  } catch {
    return null
  }
}

export function readNumber(path: string): number | null {
  const text = readTrimmed(path)
  if (text === null) return null
  const value = Number(text)
  return Number.isFinite(value) ? value : null
}

export function listEntries(path: string): string[] {
  try {
    return readdirSync(path).sort()
  } catch {
    return []
  }
}
