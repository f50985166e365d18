import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parsePackDirectory, parseSingleFilePack } from '../../src/packs/parse-pack.js'
import { parseJsonSafely } from '../../src/packs/safe-json.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import { PackProblem, RulePack } from '../../src/schemas/rule-pack.js'

const source = { layer: 'user' as const, origin: { kind: 'user' as const, path: '/fuzz', plugin: null } }

const validPack = {
  schemaVersion: 1,
  meta: { name: 'fuzz', version: '1.0.0', description: 'fuzzed' },
  appliesTo: { all: [{ fact: 'gpuVendor', operator: 'equal', value: 'nvidia' }] },
  rules: [
    {
      id: 'one',
      description: 'd',
      priority: 60,
      conditions: {
        any: [
          { fact: 'vramGiB', operator: 'lessThan', value: 10 },
          { not: { fact: 'mode', operator: 'in', value: ['extreme'] } },
        ],
      },
      event: {
        type: 'cap',
        params: { setting: 'dataloaderWorkers', max: { fact: 'spareCores' }, reason: 'r' },
      },
    },
    {
      id: 'two',
      description: 'd',
      conditions: { all: [] },
      event: { type: 'suggest', params: { id: 'x', message: 'm', expectedGain: '+1%' } },
    },
  ],
}

const dangerousKeys = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'fact',
  'all',
  'value',
  'rules',
  'event',
)

/** A copy of `value` with one place replaced by `replacement` (a random path into the tree). */
function mutate(value: unknown, choices: number[], replacement: unknown, key: string): unknown {
  if (choices.length === 0 || value === null || typeof value !== 'object') return replacement
  const [choice = 0, ...rest] = choices
  if (Array.isArray(value)) {
    if (value.length === 0) return [replacement]
    const index = choice % value.length
    return value.map((item, i) => (i === index ? mutate(item, rest, replacement, key) : item))
  }
  const keys = Object.keys(value)
  const target = choice % (keys.length + 1)
  if (target === keys.length) return { ...(value as object), [key]: replacement }
  const name = keys[target] as string
  return {
    ...(value as Record<string, unknown>),
    [name]: mutate((value as Record<string, unknown>)[name], rest, replacement, key),
  }
}

function assertOutcome(result: ReturnType<typeof parseSingleFilePack>): void {
  if (result.pack) {
    expect(result.problems).toEqual([])
    const { layer: _layer, origin: _origin, ...pack } = result.pack
    expect(RulePack.safeParse(pack).success).toBe(true)
  } else {
    expect(result.problems.length).toBeGreaterThan(0)
    for (const problem of result.problems) {
      expect(PackProblem.safeParse(problem).success).toBe(true)
      expect(problem.path.startsWith('$')).toBe(true)
    }
  }
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted')
  expect(({} as Record<string, unknown>).polluted).toBeUndefined()
}

describe('pack loader under random input', () => {
  it('turns any JSON value into a pack or typed problems', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        assertOutcome(
          parseSingleFilePack({ file: 'fuzz.json', text: JSON.stringify(value) ?? 'null' }, source),
        )
      }),
      { numRuns: 300 },
    )
  })

  it('turns mutated valid packs into a pack or typed problems, never polluting prototypes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.oneof(fc.jsonValue(), fc.constant({ polluted: true })),
        dangerousKeys,
        (choices, replacement, key) => {
          const mutated = mutate(validPack, choices, replacement, key)
          // JSON.stringify drops an own "__proto__" key set by spread; write it into the text the way a file would.
          const text = JSON.stringify(mutated).replace(
            '"rules":',
            key === '__proto__' ? '"__proto__":{"polluted":true},"rules":' : '"rules":',
          )
          assertOutcome(parseSingleFilePack({ file: 'fuzz.json', text }, source))
        },
      ),
      { numRuns: 400 },
    )
  })

  it('handles arbitrary text as pack.json and rule files', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 200 }), (manifest, rule) => {
        assertOutcome(
          parsePackDirectory(
            { file: 'pack.json', text: manifest },
            [{ file: 'rules/r.json', text: rule }],
            source,
          ),
        )
      }),
      { numRuns: 200 },
    )
  })

  it('parseJsonSafely and the profile schema never throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const result = parseJsonSafely(text, { maxBytes: 10_000, maxDepth: 16 })
        if (result.ok) expect(() => HardwareProfile.safeParse(result.value)).not.toThrow()
      }),
      { numRuns: 300 },
    )
  })
})
