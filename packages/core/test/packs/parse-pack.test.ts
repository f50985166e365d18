import { describe, expect, it } from 'vitest'
import { parsePackDirectory, parseRuleFile, parseSingleFilePack } from '../../src/packs/parse-pack.js'
import type { PackProblem } from '../../src/schemas/rule-pack.js'

const source = {
  layer: 'user' as const,
  origin: { kind: 'user' as const, path: '/packs/mine', plugin: null },
}
const manifest = {
  schemaVersion: 1,
  meta: { name: 'mine', version: '1.0.0', description: 'test pack' },
  appliesTo: null,
}

function rule(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    description: 'test rule',
    priority: 50,
    conditions: { all: [{ fact: 'vramGiB', operator: 'lessThan', value: 12 }] },
    event: { type: 'set', params: { setting: 'gradCheckpointing', value: true, reason: 'small GPU' } },
    ...overrides,
  }
}

const file = (name: string, value: unknown) => ({ file: name, text: JSON.stringify(value) })

function problemsOf(rules: Array<Record<string, unknown>>): PackProblem[] {
  return parsePackDirectory(
    file('pack.json', manifest),
    rules.map((r) => file(`rules/${String(r.id)}.json`, r)),
    source,
  ).problems
}

describe('parsePackDirectory', () => {
  it('assembles a valid pack, sorted by rule id, in the layer its origin gives', () => {
    const result = parsePackDirectory(
      file('pack.json', manifest),
      [file('rules/b.json', rule('b')), file('rules/a.json', rule('a'))],
      source,
    )
    expect(result.problems).toEqual([])
    expect(result.pack?.rules.map((r) => r.id)).toEqual(['a', 'b'])
    expect(result.pack?.layer).toBe('user')
    expect(Object.isFrozen(result.pack?.rules[0]?.conditions)).toBe(true)
  })

  it('names file, rule and path for an unknown fact, with the nearest known name', () => {
    const [problem] = problemsOf([
      rule('typo', { conditions: { all: [{ fact: 'vramGB', operator: 'lessThan', value: 12 }] } }),
    ])
    expect(problem).toMatchObject({
      code: 'E_PACK_SCHEMA',
      file: 'rules/typo.json',
      ruleId: 'typo',
      path: '$.conditions.all[0].fact',
      pack: 'mine',
    })
    expect(problem?.message).toContain('unknown fact "vramGB"')
    expect(problem?.message).toContain('did you mean "vramGiB"?')
  })

  it('follows nested condition groups to the offending value', () => {
    const nested = { all: [{ any: [{ not: { fact: 'gpuFamily', operator: 'equal', value: 'rtx4O' } }] }] }
    const [problem] = problemsOf([rule('nested', { conditions: nested })])
    expect(problem?.path).toBe('$.conditions.all[0].any[0].not.value')
    expect(problem?.message).toContain('"rtx4O" is not a value fact "gpuFamily" can take')
  })

  it('refuses operators, event types and settings outside the vocabulary', () => {
    const operator = problemsOf([
      rule('op', { conditions: { all: [{ fact: 'vramGiB', operator: 'regex', value: '.*' }] } }),
    ])
    expect(operator[0]).toMatchObject({ path: '$.conditions.all[0].operator' })
    const event = problemsOf([rule('ev', { event: { type: 'exec', params: {} } })])
    expect(event[0]).toMatchObject({ path: '$.event.type' })
    expect(event[0]?.message).toContain('unknown event type "exec"')
    const setting = problemsOf([
      rule('st', { event: { type: 'set', params: { setting: 'learningRate', value: 1, reason: 'r' } } }),
    ])
    expect(setting[0]).toMatchObject({ path: '$.event.params.setting' })
  })

  it('checks values against the setting and the fact they meet', () => {
    const badValue = problemsOf([
      rule('v', { event: { type: 'set', params: { setting: 'precision', value: 'fp8', reason: 'r' } } }),
    ])
    expect(badValue[0]).toMatchObject({ path: '$.event.params.value' })
    const numericOnString = problemsOf([
      rule('n', { conditions: { all: [{ fact: 'gpuName', operator: 'greaterThan', value: 3 }] } }),
    ])
    expect(numericOnString[0]?.message).toContain('needs a numeric fact')
    const capOnEnum = problemsOf([
      rule('c', { event: { type: 'cap', params: { setting: 'precision', max: 2, reason: 'r' } } }),
    ])
    expect(capOnEnum[0]?.message).toContain('only numeric settings can be capped')
    const factIntoBoolean = problemsOf([
      rule('f', {
        event: { type: 'set', params: { setting: 'compile', value: { fact: 'physicalCores' }, reason: 'r' } },
      }),
    ])
    expect(factIntoBoolean[0]?.message).toContain('only numeric settings take a fact')
  })

  it('refuses unknown keys, including a layer a pack tries to choose for itself', () => {
    const result = parsePackDirectory(file('pack.json', { ...manifest, layer: 'core' }), [], source)
    expect(result.pack).toBeNull()
    expect(result.problems[0]).toMatchObject({
      file: 'pack.json',
      path: '$.layer',
      message: 'unknown key "layer"',
    })
    expect(problemsOf([rule('k', { run: 'rm -rf /' })])[0]).toMatchObject({ path: '$.run' })
  })

  it('refuses prototype keys and a rule whose id does not match its file', () => {
    const proto = parsePackDirectory(
      file('pack.json', manifest),
      [{ file: 'rules/p.json', text: '{"id":"p","__proto__":{"x":1}}' }],
      source,
    )
    expect(proto.problems[0]).toMatchObject({
      code: 'E_PACK_FORBIDDEN_KEY',
      path: '$.__proto__',
      file: 'rules/p.json',
      ruleId: 'p',
    })
    const misnamed = parsePackDirectory(
      file('pack.json', manifest),
      [file('rules/other.json', rule('mine'))],
      source,
    )
    expect(misnamed.problems[0]).toMatchObject({ code: 'E_PACK_RULE_FILE', ruleId: 'mine' })
  })

  it('refuses the whole pack when one rule is bad', () => {
    const result = parsePackDirectory(
      file('pack.json', manifest),
      [file('rules/good.json', rule('good')), file('rules/bad.json', { id: 'bad' })],
      source,
    )
    expect(result.pack).toBeNull()
    expect(result.problems.every((p) => p.file === 'rules/bad.json')).toBe(true)
  })
})

describe('parseSingleFilePack', () => {
  it('loads a whole pack from one file', () => {
    const result = parseSingleFilePack(
      file('mine.json', { ...manifest, rules: [rule('a'), rule('b')] }),
      source,
    )
    expect(result.pack?.rules).toHaveLength(2)
  })

  it('names the rule of a problem inside the rules list, and refuses duplicate ids', () => {
    const bad = parseSingleFilePack(
      file('mine.json', { ...manifest, rules: [rule('a'), rule('b', { priority: 500 })] }),
      source,
    )
    expect(bad.problems[0]).toMatchObject({ ruleId: 'b', path: '$.rules[1].priority' })
    const dup = parseSingleFilePack(file('mine.json', { ...manifest, rules: [rule('a'), rule('a')] }), source)
    expect(dup.problems[0]).toMatchObject({ path: '$.rules[1].id' })
    expect(dup.problems[0]?.message).toContain('duplicate rule id')
  })
})

describe('parseRuleFile', () => {
  it('validates one rule file on its own', () => {
    expect(parseRuleFile(file('rules/a.json', rule('a'))).rule?.id).toBe('a')
    expect(parseRuleFile(file('a.json', rule('b'))).problems[0]?.code).toBe('E_PACK_RULE_FILE')
  })
})
