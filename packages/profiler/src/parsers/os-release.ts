import { nonEmptyLines } from './values.js'

/** Parses /etc/os-release (`KEY="value"` lines). */
export function parseOsRelease(text: string): Record<string, string> {
  const values: Record<string, string> = Object.create(null)
  for (const line of nonEmptyLines(text)) {
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim())
    if (!match) continue
    values[match[1] as string] = (match[2] as string).replace(/^(["'])(.*)\1$/, '$2')
  }
  return values
}
