import { readdirSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// Core's main entry parses text and objects; reading files and running processes belong to
// the `@rigfit/core/node` entry (src/node), so a browser or a test can use the planner without a disk.
const src = fileURLToPath(new URL('../src', import.meta.url))
const nodeDir = join(src, 'node')
const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return path === nodeDir ? [] : sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : []
  })
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const found = [...text.matchAll(/\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'\s*\)|^import\s+'([^']+)'/gm)]
  return found.map((match) => match[1] ?? match[2] ?? match[3] ?? '')
}

describe("core's main entry does no I/O", () => {
  const files = sourceFiles(src)

  it('finds the source files it checks', () => {
    expect(files.map((file) => relative(src, file))).toEqual(
      expect.arrayContaining(['index.ts', 'rules/decide.ts']),
    )
  })

  it.each(files.map((file) => [relative(src, file), file]))(
    '%s imports no Node built-in and nothing from node/',
    (_, file) => {
      for (const spec of importsOf(file)) {
        expect(builtins.has(spec), `${spec} is a Node built-in`).toBe(false)
        if (spec.startsWith('.'))
          expect(resolve(dirname(file), spec).startsWith(nodeDir), `${spec} is in src/node`).toBe(false)
      }
    },
  )
})
