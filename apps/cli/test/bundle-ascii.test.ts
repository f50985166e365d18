import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ESTIMATE_ARGS, rigfit } from './helpers/run-cli.js'

// V8 holds a source file with any non-ASCII character as a two-byte string, decoded and compiled at every start:
// the bundle is written in ASCII (scripts/bundle.mjs), its strings' other characters escaped.
const bundle = fileURLToPath(new URL('../bundle', import.meta.url))

function* jsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* jsFiles(path)
    else if (entry.name.endsWith('.js')) yield path
  }
}

/** Index of the first UTF-16 unit outside ASCII, or -1. */
function firstNonAscii(text: string): number {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return i
  return -1
}

describe('the bundled CLI', () => {
  it('is ASCII in every file a start can load', () => {
    const files = [...jsFiles(bundle)]
    expect(files.length).toBeGreaterThan(10)
    const offenders = files.flatMap((file) => {
      const text = readFileSync(file, 'utf8')
      const at = firstNonAscii(text)
      return at < 0
        ? []
        : [`${file.slice(bundle.length + 1)}: ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 10))}`]
    })
    expect(offenders).toEqual([])
  })

  it('still prints the non-ASCII characters its messages hold', () => {
    const result = rigfit([...ESTIMATE_ARGS])
    expect(result.status, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/GiB–/)
  })
})
