import { printableLine } from '@rigfit/core'
/**
 * Shared value parsing for tool output. Vendor tools print "N/A", "[N/A]", "[Not Supported]",
 * "[Unknown Error]" or "[GPU is lost]" where a figure is missing; all of those mean "unknown" here.
 */
export function isMissingValue(raw: string | undefined | null): boolean {
  if (raw === undefined || raw === null) return true
  const value = raw.trim()
  return value === '' || /^\[.*\]$/.test(value) || /^(n\/a|na|none|unknown|not supported)$/i.test(value)
}

/** A finite number from a tool's field, tolerating a trailing unit ("81920 MiB", "250.00 W"); else null. */
export function parseNumber(raw: string | undefined | null): number | null {
  if (isMissingValue(raw)) return null
  const match = /^[+-]?(\d+(\.\d+)?|\.\d+)([eE][+-]?\d+)?/.exec((raw as string).trim())
  if (!match) return null
  const value = Number(match[0])
  return Number.isFinite(value) ? value : null
}

/** A tool's text value on one line, control characters shown as escapes (a name is printed to the terminal). */
export function parseText(raw: string | undefined | null): string | null {
  return isMissingValue(raw) ? null : printableLine((raw as string).trim())
}

const UNIT_FACTORS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
}

/**
 * Bytes from a size with a unit ("8 GB", "196592 MB", "1536 MiB"). Vendor tools say "MB" for what are
 * binary megabytes (amd-smi, system_profiler, nvidia-smi alike), so `binaryDefault` treats KB/MB/GB as
 * 1024-based unless the caller knows better. Negative, non-finite and unparseable sizes are null.
 */
export function parseSize(
  raw: string | number | undefined | null,
  defaultUnit = 'b',
  binaryDefault = true,
): number | null {
  if (raw === undefined || raw === null) return null
  if (typeof raw === 'number') return bytesOf(raw, defaultUnit, binaryDefault)
  if (isMissingValue(raw)) return null
  // Trimmed first and no `\s*` next to another `\s*`: adjacent optional runs backtrack quadratically.
  const match = /^(\d+(?:\.\d+)?)(?:\s*([kmgt]?i?b))?$/i.exec(raw.trim())
  if (!match) return null
  return bytesOf(Number(match[1]), match[2] ?? defaultUnit, binaryDefault)
}

/** Bytes of an amount in a unit; null when negative or not finite. */
export function bytesOf(amount: number, unit: string, binaryDefault = true): number | null {
  const bytes = Math.round(amount * unitFactor(unit, binaryDefault))
  return Number.isFinite(bytes) && bytes >= 0 ? bytes : null
}

function unitFactor(unit: string, binaryDefault: boolean): number {
  const lower = unit.toLowerCase()
  if (binaryDefault && /^[kmgt]b$/.test(lower)) return UNIT_FACTORS[`${lower[0]}ib`] as number
  return UNIT_FACTORS[lower] ?? 1
}

/** Removes ANSI escape sequences (nvidia-smi underlines the topology header). */
export function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the escape character is the point
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '')
}

/**
 * The longest line a parser looks at. Real tool lines are far shorter (a `flags` line of /proc/cpuinfo is about
 * 1,500 characters, an overlay mount's options a few thousand); a longer line is skipped whole, so the work of
 * every per-line pattern stays bounded however the output was made.
 */
export const MAX_LINE_CHARS = 65_536

export interface ToolLines {
  /** Non-empty lines without trailing whitespace, in order. */
  lines: string[]
  /** How many lines were longer than MAX_LINE_CHARS and skipped. */
  overlong: number
}

/** Splits output into lines in one linear pass (no regular expression can backtrack over a long run here). */
export function splitLines(text: string): ToolLines {
  const lines: string[] = []
  let overlong = 0
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd()
    if (line === '') continue
    if (line.length > MAX_LINE_CHARS) overlong += 1
    else lines.push(line)
  }
  return { lines, overlong }
}

/** Lines without trailing whitespace (CR included), empty and over-long ones dropped. */
export function nonEmptyLines(text: string): string[] {
  return splitLines(text).lines
}

/** JSON.parse that answers null instead of throwing; tool output is untrusted. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
