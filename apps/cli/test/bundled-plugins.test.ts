import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { BUNDLED_PLUGINS } from '@rigfit/core/node'
import { describe, expect, it } from 'vitest'
import { bundledCatalogEntries, bundledPacks } from './helpers/bundled-plugins.js'
import { rigfitJson } from './helpers/run-cli.js'

const require = createRequire(import.meta.url)
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

describe("core's bundled-plugin loader is the CLI's", () => {
  it('names the plugins the CLI ships with, in the order the CLI loads them', () => {
    const shipped = (manifest.oclif.plugins as string[]).filter((name) => name.startsWith('@rigfit/plugin-'))
    expect([...BUNDLED_PLUGINS]).toEqual([...shipped].sort())
  })

  it('loads the packs `rigfit rules list` shows and every shipped catalog entry, in the CLI order', () => {
    const listed = rigfitJson(['rules', 'list'])
    const names = (listed.packs as { meta: { name: string } }[]).map((pack) => pack.meta.name)
    expect(bundledPacks().map((pack) => pack.meta.name)).toEqual(names)
    // Each shipped catalog.json as written, in the CLI's plugin order: nothing dropped, reordered or doubled.
    const written = BUNDLED_PLUGINS.flatMap((plugin) => {
      const file = join(dirname(require.resolve(`${plugin}/package.json`)), 'catalog.json')
      return existsSync(file)
        ? JSON.parse(readFileSync(file, 'utf8')).entries.map((e: { id: string }) => e.id)
        : []
    })
    expect(written.length).toBeGreaterThan(50)
    expect(bundledCatalogEntries().map((entry) => entry.id)).toEqual(written)
  })
})
