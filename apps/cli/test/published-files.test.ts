import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// `rigfit` installs every workspace package from the registry, so each tarball must hold what its package.json
// names. `pnpm pack --dry-run` lists the files `pnpm publish` would upload, by the same rules.

const repo = fileURLToPath(new URL('../../..', import.meta.url))

interface WorkspacePackage {
  name: string
  path: string
  private?: boolean
}

interface Manifest {
  main?: string
  types?: string
  bin?: string | Record<string, string>
  exports?: unknown
  oclif?: { commands?: string; hooks?: Record<string, string | string[]> }
}

const published = (
  JSON.parse(
    execFileSync('pnpm', ['-r', 'ls', '--depth', '-1', '--json'], { cwd: repo, encoding: 'utf8' }),
  ) as WorkspacePackage[]
).filter((pkg) => !pkg.private)

function packedFiles(dir: string): string[] {
  const out = execFileSync('pnpm', ['pack', '--dry-run', '--json'], { cwd: dir, encoding: 'utf8' })
  return (JSON.parse(out) as { files: { path: string }[] }).files.map((file) => file.path)
}

/** Every file path a conditional export map names, however deeply its conditions nest. */
function exportTargets(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports]
  if (exports === null || typeof exports !== 'object') return []
  return Object.values(exports).flatMap(exportTargets)
}

/** `./dist/index.js` -> `dist/index.js`, as the pack lists it. */
const packPath = (target: string) => posix.normalize(target).replace(/^\.\//, '')

/** A target with a `*` (a subpath pattern) is satisfied by any packed file it matches. */
function isPacked(target: string, files: Set<string>): boolean {
  const path = packPath(target)
  if (!path.includes('*')) return files.has(path)
  const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const pattern = new RegExp(`^${path.split('*').map(escapeRegExp).join('.+')}$`)
  return [...files].some((file) => pattern.test(file))
}

/** What the package.json of a package promises to a user: entry points, exports, bins, oclif hooks. */
function namedFiles(manifest: Manifest): string[] {
  const bins = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {})
  const hooks = Object.values(manifest.oclif?.hooks ?? {}).flat()
  return [manifest.main, manifest.types, ...bins, ...exportTargets(manifest.exports), ...hooks].filter(
    (target): target is string => typeof target === 'string',
  )
}

describe('the files each workspace package publishes', () => {
  it('covers every package of the workspace', () => {
    expect(published.map((pkg) => pkg.name)).toEqual(
      expect.arrayContaining(['rigfit', '@rigfit/core', '@rigfit/exporters', '@rigfit/plugin-rtx40']),
    )
  })

  describe.each(published)('$name', ({ path: dir }) => {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
    const files = new Set(packedFiles(dir))

    it('holds every file its package.json names (exports, bin, main, types, oclif hooks)', () => {
      const named = namedFiles(manifest)
      expect(named.length).toBeGreaterThan(0)
      expect(named.filter((target) => !isPacked(target, files))).toEqual([])
      if (manifest.oclif?.commands) {
        const commands = `${packPath(manifest.oclif.commands)}/`
        expect([...files].some((file) => file.startsWith(commands))).toBe(true)
      }
    })

    it('has a README', () => {
      expect(files.has('README.md')).toBe(true)
    })

    it('ships the sources its source maps and declaration maps point at', () => {
      const maps = [...files].filter((file) => file.endsWith('.map'))
      // tsc's output (dist/) carries maps; the bundled CLI (bundle/, readable, unminified) ships none.
      const compiled = [...files].some((file) => file.startsWith('dist/') && file.endsWith('.js'))
      expect(maps.length > 0).toBe(compiled)
      const missing = maps.flatMap((map) => {
        const { sources } = JSON.parse(readFileSync(join(dir, map), 'utf8')) as { sources: string[] }
        return sources
          .map((source) => posix.join(posix.dirname(map), source))
          .filter((source) => !files.has(source))
          .map((source) => `${map} -> ${source}`)
      })
      expect(missing).toEqual([])
    })

    it('leaves tests, fixtures of tests and build info out', () => {
      const testOnly = /(^|\/)(test|__snapshots__)\/|\.test\.ts$|\.tsbuildinfo$/
      expect([...files].filter((file) => testOnly.test(file))).toEqual([])
    })
  })
})
