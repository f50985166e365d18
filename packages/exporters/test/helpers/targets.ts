import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import type { ExportFile } from '../../src/types.js'

/** A documented field list from test/fixtures/targets. */
export function target<T = string[]>(name: string): T {
  const text = readFileSync(fileURLToPath(new URL(`../fixtures/targets/${name}`, import.meta.url)), 'utf8')
  return (name.endsWith('.yaml') ? parse(text) : JSON.parse(text)) as T
}

export function file(files: ExportFile[], suffix: string): ExportFile {
  const found = files.find(
    (f) => f.path === suffix || f.path.endsWith(`/${suffix}`) || f.path.endsWith(suffix),
  )
  if (!found) throw new Error(`no file ending in ${suffix} among ${files.map((f) => f.path).join(', ')}`)
  return found
}

export const json = (f: ExportFile) => JSON.parse(f.content) as Record<string, unknown>
/** PyYAML reads YAML 1.1, so the tests do too. */
export const yaml = (f: ExportFile) => parse(f.content, { version: '1.1' }) as Record<string, unknown>

export function keysOf(value: unknown): string[] {
  return value && typeof value === 'object' ? Object.keys(value) : []
}

/** Names in `used` missing from the documented list, for a readable failure. */
export function undocumented(used: string[], documented: string[]): string[] {
  return used.filter((k) => !documented.includes(k))
}
