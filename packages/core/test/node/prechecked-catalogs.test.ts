import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  buildPrecheckedCatalogs,
  loadCatalogFile,
  PRECHECKED_CATALOGS_FORMAT,
  readPrecheckedCatalogs,
} from '../../src/node/prechecked-catalogs.js'

// The plugins' GPU catalogs, validated at build time and stored by the hash of their text, load as full
// validation loads them; any other text (edited, broken) is validated in full, and a stored file whose own hash or
// format does not match is not used.

const root = mkdtempSync(join(tmpdir(), 'rigfit-prechecked-catalogs-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const plugins = join(import.meta.dirname, '../../../../plugins')
const shipped = readdirSync(plugins).map((name) => join(plugins, name, 'catalog.json'))
const storePath = join(root, 'prechecked-catalogs.json')
writeFileSync(storePath, buildPrecheckedCatalogs(shipped))

function readStore() {
  const store = readPrecheckedCatalogs(storePath)
  if (!store) throw new Error('prechecked catalogs not read')
  return store
}

/** A copy of a shipped catalog, its text changed by `edit`. */
function editedCopy(source: string, edit: (text: string) => string): string {
  const dir = join(root, `copy-${Math.random().toString(36).slice(2)}`)
  mkdirSync(dir)
  const path = join(dir, 'catalog.json')
  writeFileSync(path, edit(readFileSync(source, 'utf8')))
  return path
}

const withEntries = shipped.filter((path) => loadCatalogFile(path).entries.length > 0)

describe('prechecked GPU catalogs', () => {
  it('stores every shipped catalog that has entries', () => {
    expect(withEntries.length).toBeGreaterThan(5)
    expect(readStore().size).toBe(withEntries.length)
  })

  it.each(shipped)('loads %s as full validation does, as a fresh copy each time', (path) => {
    const store = readStore()
    const full = loadCatalogFile(path)
    const first = loadCatalogFile(path, store)
    expect(first).toStrictEqual(full)
    const second = loadCatalogFile(path, store)
    expect(second).toStrictEqual(full)
    if (first.entries.length > 0) expect(second.entries[0]).not.toBe(first.entries[0])
  })

  it('validates an edited catalog in full: a changed value is read, a broken entry is reported', () => {
    const store = readStore()
    const source = withEntries[0] as string
    const full = loadCatalogFile(source)
    const first = full.entries[0]?.id as string
    const renamed = editedCopy(source, (text) => text.replace(`"${first}"`, '"renamed-gpu"'))
    expect(loadCatalogFile(renamed, store).entries.map((entry) => entry.id)).toContain('renamed-gpu')
    const broken = editedCopy(source, (text) => text.replace(`"id": "${first}"`, '"id": 42'))
    const loaded = loadCatalogFile(broken, store)
    expect(loaded.entries).toEqual([])
    expect(loaded.problems[0]?.code).toBe('E_PACK_CATALOG')
  })

  it('ignores a stored file whose body, hash or format was changed', () => {
    const file = JSON.parse(readFileSync(storePath, 'utf8'))
    const write = (content: object) => {
      const path = join(root, `store-${Math.random().toString(36).slice(2)}.json`)
      writeFileSync(path, JSON.stringify(content))
      return path
    }
    expect(readPrecheckedCatalogs(write({ ...file, body: file.body.replace('"id"', '"id" ') }))).toBeNull()
    expect(readPrecheckedCatalogs(write({ ...file, hash: file.hash.replace(/./, 'x') }))).toBeNull()
    expect(readPrecheckedCatalogs(write({ ...file, format: `${PRECHECKED_CATALOGS_FORMAT}x` }))).toBeNull()
    expect(readPrecheckedCatalogs(join(root, 'none.json'))).toBeNull()
  })

  it('refuses to build from a catalog that does not validate, naming it', () => {
    const source = withEntries[0] as string
    const broken = editedCopy(source, (text) => text.replace('"entries"', '"entrees"'))
    expect(() => buildPrecheckedCatalogs([broken])).toThrow(/catalog .*catalog\.json does not validate/)
  })

  it('skips a missing catalog, as loading does', () => {
    const dir = join(root, 'no-catalog')
    mkdirSync(dir)
    expect(loadCatalogFile(join(dir, 'catalog.json'), readStore())).toEqual({ entries: [], problems: [] })
    expect(buildPrecheckedCatalogs([join(dir, 'catalog.json')])).toContain(PRECHECKED_CATALOGS_FORMAT)
  })
})
