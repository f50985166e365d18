import { readdirSync, readFileSync } from 'node:fs'
import { Engine } from 'json-rules-engine'
import { describe, expect, it } from 'vitest'
import { CORE_PACK_ROOT, loadCorePack } from '../../src/node/core-pack.js'
import type { LoadedPack } from '../../src/packs/loaded-pack.js'
import { deriveFacts } from '../../src/rules/derive-facts.js'
import { RulesEngine } from '../../src/rules/engine.js'
import type { Facts } from '../../src/schemas/facts.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import type { Mode } from '../../src/schemas/index.js'
import { packOf } from '../helpers/packs.js'

// The engine evaluates the packs' appliesTo first and then only the rules of the packs that apply. The reference
// here is the plain reading of a pack: one json-rules-engine holding every rule, each joined with its pack's
// appliesTo. Both must fire the same rules and report the same packs as applying, for every profile and mode.

const profiles = readdirSync(`${CORE_PACK_ROOT}fixtures`)
  .filter((name) => name.endsWith('.json'))
  .map((name) => HardwareProfile.parse(JSON.parse(readFileSync(`${CORE_PACK_ROOT}fixtures/${name}`, 'utf8'))))
const MODES: Mode[] = ['conservative', 'balanced', 'extreme']

const fact = (name: string, operator: string, value: unknown) => ({ fact: name, operator, value })

/** Conditions of several shapes over facts that differ between the fixtures and the modes. */
const CONDITIONS = [
  { all: [] },
  { all: [fact('mode', 'equal', 'extreme')] },
  { any: [fact('gpuCount', 'greaterThan', 1), fact('mode', 'equal', 'conservative')] },
  { all: [fact('vramGiB', 'greaterThanInclusive', 16), { not: fact('gpuVendor', 'equal', 'none') }] },
  { all: [fact('physicalCores', 'lessThan', 8)] },
  { any: [fact('gpuName', 'startsWith', 'NVIDIA'), fact('gpuFamily', 'in', ['cpu', 'apple'])] },
]

/** appliesTo of several shapes: none, one vendor, a threshold, and a compound one. */
const APPLIES = [
  null,
  { all: [fact('gpuVendor', 'equal', 'nvidia')] },
  { all: [fact('gpuVendor', 'equal', 'none')] },
  { any: [fact('gpuVendor', 'equal', 'amd'), fact('gpuVendor', 'equal', 'apple')] },
  { all: [fact('ramGiB', 'greaterThan', 24), { not: fact('mode', 'equal', 'balanced') }] },
]

function warnPack(index: number, appliesTo: unknown): LoadedPack {
  const name = `p${index}`
  const rules = CONDITIONS.map((conditions, rule) => ({
    id: `r${rule}`,
    description: `rule ${rule}`,
    conditions,
    event: { type: 'warn', params: { id: `${name}-r${rule}`, message: `rule ${rule} of ${name}` } },
  }))
  return packOf(name, 'vendor', rules, appliesTo)
}

/** Every rule in one engine, each under `all: [appliesTo, its conditions]`; the probes say which packs apply. */
async function reference(packs: readonly LoadedPack[], facts: Facts) {
  const engine = new Engine([], { allowUndefinedFacts: false, allowUndefinedConditions: false })
  engine.addOperator<unknown, string>(
    'startsWith',
    (value, prefix) => typeof value === 'string' && value.startsWith(prefix),
  )
  packs.forEach((pack, index) => {
    const applies = structuredClone(pack.appliesTo)
    if (applies) engine.addRule({ name: `${index}#applies`, conditions: applies, event: { type: 'applies' } })
    for (const rule of pack.rules) {
      const own = structuredClone(rule.conditions)
      const conditions = applies ? { all: [structuredClone(applies), own] } : own
      engine.addRule({ name: `${index}/${rule.id}`, conditions, event: { type: rule.event.type } })
    }
  })
  const { results } = await engine.run({ ...facts })
  const names = results.map((result) => result.name)
  return {
    fired: names.filter((name) => !name.endsWith('#applies')).sort(),
    applying: packs.flatMap((pack, index) =>
      pack.appliesTo === null || names.includes(`${index}#applies`) ? [pack.meta.name] : [],
    ),
  }
}

describe('the rules engine', () => {
  const packs = [loadCorePack(), ...APPLIES.map((appliesTo, index) => warnPack(index, appliesTo))]

  it('fires what one engine of every rule joined with its pack’s appliesTo fires, on every fixture and mode', async () => {
    const engine = await RulesEngine.create(packs)
    let compared = 0
    const applyingSets = new Set<string>()
    for (const profile of profiles) {
      for (const mode of MODES) {
        const facts = deriveFacts(profile, null, mode)
        const run = await engine.run(facts)
        const expected = await reference(packs, facts)
        const fired = run.fired.map((c) => `${packs.indexOf(c.pack)}/${c.rule.id}`).sort()
        const applying = packs.filter((pack) => run.applies.get(pack)).map((pack) => pack.meta.name)
        expect(fired, `${profile.host.hostname} ${mode}`).toEqual(expected.fired)
        expect(applying).toEqual(expected.applying)
        applyingSets.add(applying.join(','))
        compared++
      }
    }
    expect(compared).toBeGreaterThanOrEqual(profiles.length * 3)
    // The fixtures reach several sets of applying packs, so the per-set engines are exercised, and reused.
    expect(applyingSets.size).toBeGreaterThan(2)
  })

  it('records the facts each fired rule read', async () => {
    const engine = await RulesEngine.create(packs)
    const run = await engine.run(deriveFacts(profiles[0] as HardwareProfile, null, 'extreme'))
    const reads = (packName: string, rule: string) =>
      run.fired.find((c) => c.pack.meta.name === packName && c.rule.id === rule)?.reads
    // p0 applies everywhere: r0 reads nothing, r1 the mode.
    expect(reads('p0', 'r0')).toEqual([])
    expect(reads('p0', 'r1')).toEqual(['mode'])
  })
})
