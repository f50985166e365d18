import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadPackPath, loadPacksIn, loadValidationTarget } from '../../src/node/load-pack.js'
import { uniquePacks } from '../../src/node/unique-packs.js'
import { PACK_LIMITS } from '../../src/packs/limits.js'

const root = mkdtempSync(join(tmpdir(), 'rigfit-packs-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const user = { layer: 'user' as const, kind: 'user' as const }
const manifest = (name: string) => ({
  schemaVersion: 1,
  meta: { name, version: '1.0.0', description: `${name} pack` },
  appliesTo: null,
})
const warnRule = (id: string) => ({
  id,
  description: 'warns',
  priority: 50,
  conditions: { all: [] },
  event: { type: 'warn', params: { id: `${id}-message`, message: 'hello' } },
})

function writePack(
  dir: string,
  name: string,
  rules: Array<{ id: string } & Record<string, unknown>>,
): string {
  const path = join(root, dir)
  mkdirSync(join(path, 'rules'), { recursive: true })
  writeFileSync(join(path, 'pack.json'), JSON.stringify(manifest(name)))
  for (const rule of rules) writeFileSync(join(path, 'rules', `${rule.id}.json`), JSON.stringify(rule))
  return path
}

describe('loadPacksIn', () => {
  const folder = join(root, 'config-rules')
  mkdirSync(folder, { recursive: true })
  writePack('config-rules/good', 'good', [warnRule('hello')])
  writePack('config-rules/broken', 'broken', [{ ...warnRule('x'), event: { type: 'shell', params: {} } }])
  writeFileSync(
    join(folder, 'single.json'),
    JSON.stringify({ ...manifest('single'), rules: [warnRule('one')] }),
  )
  writeFileSync(join(folder, 'notes.txt'), 'not a pack')

  it('loads the good packs and reports the broken one with its file, rule and path', () => {
    const { packs, problems } = loadPacksIn(folder, user)
    expect(packs.map((pack) => pack.meta.name).sort()).toEqual(['good', 'single'])
    expect(packs.every((pack) => pack.layer === 'user' && pack.origin.kind === 'user')).toBe(true)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatchObject({ pack: 'broken', ruleId: 'x', path: '$.event.type' })
    expect(problems[0]?.file).toMatch(/broken[/\\]rules[/\\]x\.json$/)
  })

  it('treats a missing folder as holding no packs', () => {
    expect(loadPacksIn(join(root, 'nowhere'), user)).toEqual({ packs: [], problems: [] })
  })

  it('loads a folder that is itself a pack as one pack', () => {
    expect(loadPacksIn(join(folder, 'good'), user).packs.map((p) => p.meta.name)).toEqual(['good'])
  })
})

describe('loadPackPath', () => {
  it('refuses an oversized rule file without reading it', () => {
    const path = writePack('huge', 'huge', [])
    writeFileSync(join(path, 'rules', 'big.json'), ' '.repeat(PACK_LIMITS.ruleFileBytes + 1))
    const result = loadPackPath(path, user)
    expect(result.pack).toBeNull()
    expect(result.problems[0]).toMatchObject({ code: 'E_PACK_TOO_LARGE', pack: 'huge' })
  })

  it('reports a folder without pack.json', () => {
    mkdirSync(join(root, 'empty'), { recursive: true })
    expect(loadPackPath(join(root, 'empty'), user).problems[0]).toMatchObject({
      code: 'E_PACK_IO',
      message: 'no such file',
    })
  })

  it('loads a pack from its pack.json', () => {
    const path = writePack('by-manifest', 'by-manifest', [warnRule('a')])
    expect(loadPackPath(join(path, 'pack.json'), user).pack?.origin.path).toBe(path)
  })
})

describe('loadValidationTarget', () => {
  it('checks a single rule file on its own', () => {
    const path = writePack('lone', 'lone', [warnRule('solo')])
    const result = loadValidationTarget(join(path, 'rules', 'solo.json'), user)
    expect(result.rules.map((rule) => rule.id)).toEqual(['solo'])
    expect(result.packs).toEqual([])
  })
})

describe('uniquePacks', () => {
  it('keeps the first pack of a name and reports the later one', () => {
    const a = loadPackPath(writePack('dup-a', 'twin', [warnRule('a')]), user).pack
    const b = loadPackPath(writePack('dup-b', 'twin', [warnRule('b')]), user).pack
    if (!a || !b) throw new Error('test packs did not load')
    const result = uniquePacks([a, b])
    expect(result.packs).toEqual([a])
    expect(result.problems[0]).toMatchObject({ code: 'E_PACK_DUPLICATE', path: '$.meta.name' })
  })
})
