import { nonEmptyLines } from './values.js'

/** Parses `sysctl` output: `key: value` (macOS, BSD) or `key = value` (Linux) per line. */
export function parseSysctl(text: string): Record<string, string> {
  const values: Record<string, string> = Object.create(null)
  for (const line of nonEmptyLines(text)) {
    const match = /^([A-Za-z0-9_.-]+)\s*(?::|=)\s?(.*)$/.exec(line)
    if (match) values[match[1] as string] = (match[2] as string).trim()
  }
  return values
}
