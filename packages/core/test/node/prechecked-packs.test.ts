import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CORE_PACK_ROOT } from '../../src/node/core-pack.js'
import { loadPackPath } from '../../src/node/load-pack.js'
import {
  buildPrecheckedBundle,
  loadPackPrechecked,
  PRECHECKED_FORMAT,
  packDigest,
  readPrecheckedBundle,
} from '../../src/node/prechecked-packs.js'

const root = mkdtempSync(join(tmpdir(), 'rigfit-prechecked-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const vendor = (plugin: string) => ({ layer: 'vendor' as const, kind: 'plugin' as const, plugin })
const warnRule = (id: string, priority: number) => ({
  id,
  description: 'warns',
  priority,
  conditions: { all: [{ fact: 'vramGiB', operator: 'greaterThan', value: priority }] },
  event: { type: 'warn', params: { id: `${id}-message`, message: `over ${priority} GiB` } },
})

function writePack(name: string, ruleCount: number): string {
  const dir = join(root, name)
  mkdirSync(join(dir, 'rules'), { recursive: true })
  const manifest = {
    schemaVersion: 1,
    meta: { name, version: '1.0.0', description: `${name} pack` },
    appliesTo: null,
  }
  writeFileSync(join(dir, 'pack.json'), JSON.stringify(manifest))
  for (let i = 0; i < ruleCount; i++) {
    const rule = warnRule(`${name}-rule-${i}`, 10 + i)
    writeFileSync(join(dir, 'rules', `${rule.id}.json`), JSON.stringify(rule, null, 2))
  }
  return dir
}

const packs = [CORE_PACK_ROOT, writePack('alpha', 1), writePack('beta', 3), writePack('gamma', 7)]
const bundlePath = join(root, 'prechecked-packs.json')
writeFileSync(bundlePath, buildPrecheckedBundle(packs))

function readBundle() {
  const read = readPrecheckedBundle(bundlePath)
  if (!read.ok) throw new Error(`bundle not read: ${read.reason}`)
  return read.bundle
}

/** Writes a copy of the bundle with its body changed by `edit`, keeping (or replacing) the recorded hash. */
function tamperedCopy(edit: (body: string) => string, hash?: (original: string) => string): string {
  const file = JSON.parse(readFileSync(bundlePath, 'utf8'))
  const path = join(root, `tampered-${Math.random().toString(36).slice(2)}.json`)
  const body = edit(file.body)
  writeFileSync(path, JSON.stringify({ ...file, body, hash: hash ? hash(file.hash) : file.hash }))
  return path
}

describe('the pre-checked pack bundle', () => {
  it.each(packs)('loads %s from the bundle exactly as full validation does', (dir) => {
    const location = vendor('@rigfit/plugin-test')
    const full = loadPackPath(dir, location)
    const prechecked = loadPackPrechecked(dir, location, readBundle())
    expect(prechecked.prechecked).toBe(true)
    expect(prechecked.pack).toStrictEqual(full.pack)
    expect(Object.isFrozen(prechecked.pack?.rules[0]?.event)).toBe(true)
  })

  it('gives each load the layer and origin of where it was found, and copies that do not share objects', () => {
    const bundle = readBundle()
    const asCore = loadPackPrechecked(CORE_PACK_ROOT, { layer: 'core', kind: 'core' }, bundle).pack
    const asUser = loadPackPrechecked(CORE_PACK_ROOT, { layer: 'user', kind: 'user' }, bundle).pack
    expect(asCore?.layer).toBe('core')
    expect(asUser?.layer).toBe('user')
    expect(asUser?.origin).toEqual({ kind: 'user', path: resolve(CORE_PACK_ROOT), plugin: null })
    expect(asCore?.rules[0]).not.toBe(asUser?.rules[0])
  })

  it('detects a body edited under the recorded hash and is not used: packs are validated in full', () => {
    const path = tamperedCopy((body) => body.replace('"priority":10', '"priority":99'))
    expect(readPrecheckedBundle(path)).toEqual({ ok: false, reason: 'hash' })
    const alpha = packs[1] as string
    const fallback = loadPackPrechecked(alpha, vendor('x'), null)
    expect(fallback.prechecked).toBe(false)
    expect(fallback.pack?.rules[0]?.priority).toBe(10)
  })

  it('detects a replaced hash, a wrong format and an unreadable or missing file', () => {
    const wrongHash = tamperedCopy(
      (body) => body,
      (hash) => createHash('sha256').update(hash).digest('hex'),
    )
    expect(readPrecheckedBundle(wrongHash)).toEqual({ ok: false, reason: 'hash' })
    const wrongFormat = join(root, 'format.json')
    writeFileSync(wrongFormat, JSON.stringify({ format: `${PRECHECKED_FORMAT}x`, hash: '', body: '[]' }))
    expect(readPrecheckedBundle(wrongFormat)).toEqual({ ok: false, reason: 'format' })
    const garbage = join(root, 'garbage.json')
    writeFileSync(garbage, '{"format": ')
    expect(readPrecheckedBundle(garbage)).toEqual({ ok: false, reason: 'unreadable' })
    expect(readPrecheckedBundle(join(root, 'none.json'))).toEqual({ ok: false, reason: 'missing' })
  })

  it('validates a pack in full once any of its files differs from what was validated at build time', () => {
    const dir = writePack('delta', 2)
    writeFileSync(bundlePath, buildPrecheckedBundle([...packs, dir]))
    expect(loadPackPrechecked(dir, vendor('x'), readBundle()).prechecked).toBe(true)
    // An edit that breaks the rule: the bundle must not hide it.
    const ruleFile = join(dir, 'rules', 'delta-rule-1.json')
    writeFileSync(ruleFile, JSON.stringify({ ...warnRule('delta-rule-1', 11), priority: 'high' }))
    const broken = loadPackPrechecked(dir, vendor('x'), readBundle())
    expect(broken.prechecked).toBe(false)
    expect(broken.pack).toBeNull()
    expect(broken.problems.map((p) => p.code)).toContain('E_PACK_SCHEMA')
    // A rule file added beside the others changes the digest as well.
    writeFileSync(ruleFile, JSON.stringify(warnRule('delta-rule-1', 11), null, 2))
    expect(loadPackPrechecked(dir, vendor('x'), readBundle()).prechecked).toBe(true)
    writeFileSync(join(dir, 'rules', 'delta-rule-9.json'), JSON.stringify(warnRule('delta-rule-9', 19)))
    const grown = loadPackPrechecked(dir, vendor('x'), readBundle())
    expect(grown.prechecked).toBe(false)
    expect(grown.pack?.rules).toHaveLength(3)
  })

  it('has no digest for what is not a pack folder, and refuses to build from a pack that does not validate', () => {
    expect(packDigest(join(root, 'missing'))).toBeNull()
    expect(packDigest(bundlePath)).toBeNull()
    // A FIFO among the rule files would block a read: it is no pack file, and the pack goes to full validation.
    if (process.platform !== 'win32') {
      const piped = writePack('zeta', 1)
      execFileSync('mkfifo', [join(piped, 'rules', 'zeta-rule-9.json')])
      expect(packDigest(piped)).toBeNull()
    }
    const bad = writePack('epsilon', 1)
    writeFileSync(join(bad, 'rules', 'epsilon-rule-0.json'), '{"id": "epsilon-rule-0"}')
    expect(() => buildPrecheckedBundle([bad])).toThrow(/epsilon.*does not validate/s)
  })
})
