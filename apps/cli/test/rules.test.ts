import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const repo = fileURLToPath(new URL('../../..', import.meta.url))
const example = join(repo, 'examples/rule-packs/shared-lab')
const fixture = (plugin: string, name: string) =>
  join(
    dirname(createRequire(import.meta.url).resolve(`@rigfit/plugin-${plugin}/package.json`)),
    'fixtures',
    `${name}.json`,
  )

const work = mkdtempSync(join(tmpdir(), 'rigfit-rules-cli-'))
const config = join(work, 'config')
afterAll(() => rmSync(work, { recursive: true, force: true }))

function rigfit(args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      NO_COLOR: '1',
      XDG_CONFIG_HOME: config,
      XDG_DATA_HOME: join(work, 'data'),
      XDG_CACHE_HOME: join(work, 'cache'),
    },
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}
const json = (stdout: string) => JSON.parse(stdout)

const manifest = (name: string) => ({
  schemaVersion: 1,
  meta: { name, version: '1.0.0', description: name },
  appliesTo: null,
})
const rule = (id: string, event: unknown) => ({ id, description: id, conditions: { all: [] }, event })

describe('rigfit rules list', () => {
  it('lists the core defaults, the seven bundled packs and the user packs; a broken user pack is reported and skipped', () => {
    const rules = join(config, 'rigfit', 'rules')
    mkdirSync(join(rules, 'broken', 'rules'), { recursive: true })
    writeFileSync(
      join(rules, 'mine.json'),
      JSON.stringify({
        ...manifest('mine'),
        rules: [
          rule('mine-cap', { type: 'cap', params: { setting: 'gpus', max: 1, reason: 'one GPU for me' } }),
        ],
      }),
    )
    writeFileSync(join(rules, 'broken', 'pack.json'), JSON.stringify(manifest('broken')))
    writeFileSync(
      join(rules, 'broken', 'rules', 'bad.json'),
      JSON.stringify(rule('bad', { type: 'set', params: { setting: 'compile', value: 'yes', reason: 'r' } })),
    )

    const result = rigfit(['rules', 'list', '--json'])
    expect(result.code).toBe(0)
    const { packs, problems } = json(result.stdout)
    expect(packs.map((p: { meta: { name: string } }) => p.meta.name)).toEqual([
      'core',
      'apple',
      'cpu',
      'datacenter',
      'intel',
      'rdna',
      'rtx20',
      'rtx30',
      'rtx40',
      'rtx50',
      'mine',
    ])
    for (const pack of packs) expect(pack.rules.length).toBeGreaterThan(0)
    expect(packs.find((p: { meta: { name: string } }) => p.meta.name === 'mine')).toMatchObject({
      layer: 'user',
      origin: { kind: 'user' },
    })
    expect(packs.find((p: { meta: { name: string } }) => p.meta.name === 'rdna')).toMatchObject({
      layer: 'vendor',
      origin: { plugin: '@rigfit/plugin-rdna' },
    })
    expect(problems).toEqual([
      expect.objectContaining({ pack: 'broken', ruleId: 'bad', path: '$.event.params.value' }),
    ])
    rmSync(rules, { recursive: true, force: true })
  })
})

describe('packs from installed plugins', () => {
  it('loads the pack a linked plugin announces and reports a plugin whose hook fails', () => {
    const plugin = (name: string, hook: string) => {
      const dir = join(work, name)
      mkdirSync(dir, { recursive: true })
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({
          name,
          version: '1.0.0',
          type: 'module',
          oclif: { hooks: { 'rigfit:packs': './hook.js' } },
        }),
      )
      writeFileSync(join(dir, 'hook.js'), hook)
      expect(rigfit(['plugins', 'link', dir, '--no-install']).code).toBe(0)
    }
    plugin(
      'rigfit-plugin-lab',
      `export default async () => ({ name: 'shared-lab', root: ${JSON.stringify(example)} })`,
    )
    plugin(
      'rigfit-plugin-broken',
      "export default async () => { throw new Error('catalog server unreachable') }",
    )

    const result = rigfit(['rules', 'list', '--json'])
    expect(result.code).toBe(0)
    const { packs, problems } = json(result.stdout)
    expect(packs.find((p: { meta: { name: string } }) => p.meta.name === 'shared-lab')).toMatchObject({
      layer: 'vendor',
      origin: { plugin: 'rigfit-plugin-lab' },
    })
    expect(problems).toEqual([
      expect.objectContaining({
        code: 'E_PACK_PLUGIN',
        message: expect.stringContaining(
          'rigfit-plugin-broken: its rigfit:packs hook failed: catalog server unreachable',
        ),
      }),
    ])
    for (const name of ['rigfit-plugin-lab', 'rigfit-plugin-broken'])
      expect(rigfit(['plugins', 'unlink', name]).code).toBe(0)
  })
})

describe('rigfit rules validate', () => {
  it('passes the example community pack', () => {
    const result = rigfit(['rules', 'validate', example, '--json'])
    expect(result.code).toBe(0)
    expect(json(result.stdout)).toMatchObject({
      valid: true,
      packs: [{ name: 'shared-lab', rules: 5 }],
      warnings: [],
    })
  })

  it('fails a malicious pack, naming file, rule and JSON path', () => {
    const dir = join(work, 'evil')
    mkdirSync(join(dir, 'rules'), { recursive: true })
    writeFileSync(join(dir, 'pack.json'), JSON.stringify(manifest('evil')))
    writeFileSync(
      join(dir, 'rules', 'evil-rule.json'),
      '{"id":"evil-rule","description":"x","conditions":{"all":[]},"event":{"type":"warn","params":{"id":"x","message":"m","__proto__":{"polluted":true}}}}',
    )
    writeFileSync(
      join(dir, 'rules', 'typo.json'),
      JSON.stringify({
        ...rule('typo', { type: 'exec', params: {} }),
        conditions: { all: [{ fact: 'vramGB', operator: 'lessThan', value: 3 }] },
      }),
    )
    const human = rigfit(['rules', 'validate', dir])
    expect(human.code).toBe(5)
    expect(human.stderr).toContain('Error [E_PACK_INVALID]')
    expect(human.stderr).toMatch(
      /evil-rule\.json: rule "evil-rule" at \$\.event\.params\.__proto__: the key "__proto__" is not allowed/,
    )
    expect(human.stderr).toMatch(
      /typo\.json: rule "typo" at \$\.conditions\.all\[0\]\.fact: unknown fact "vramGB" \(did you mean "vramGiB"\?\)/,
    )
    expect(human.stderr).toMatch(/typo\.json: rule "typo" at \$\.event\.type: unknown event type "exec"/)
    expect(human.stderr).toContain('Suggestion:')

    const machine = rigfit(['rules', 'validate', join(dir, 'rules', 'typo.json'), '--json'])
    expect(machine.code).toBe(5)
    expect(json(machine.stdout).error).toMatchObject({
      code: 'E_PACK_INVALID',
      kind: 'rules',
      details: {
        problems: expect.arrayContaining([
          expect.objectContaining({ ruleId: 'typo', path: '$.conditions.all[0].fact' }),
        ]),
      },
    })
  })

  it('is an input error on a path that does not exist', () => {
    const result = rigfit(['rules', 'validate', join(work, 'nowhere')])
    expect(result.code).toBe(3)
    expect(result.stderr).toContain('E_NO_SUCH_PATH')
  })
})

describe('rigfit rules test', () => {
  it("runs a pack's cases against bundled fixtures", () => {
    const result = rigfit(['rules', 'test', example, '--json'])
    expect(result.code).toBe(0)
    expect(json(result.stdout)).toMatchObject({ pack: 'shared-lab', passed: 4, failed: 0, unfired: [] })
  })

  it('exits non-zero and says what differs when a case fails', () => {
    const copy = join(work, 'shared-lab-copy')
    cpSync(example, copy, { recursive: true })
    const casesFile = join(copy, 'cases', 'shared-lab.json')
    writeFileSync(
      casesFile,
      readFileSync(casesFile, 'utf8').replace('"memoryFraction": 0.75', '"memoryFraction": 0.7'),
    )
    const result = rigfit(['rules', 'test', copy])
    expect(result.code).toBe(5)
    expect(result.stdout).toContain('FAIL  4x A100, balanced')
    expect(result.stdout).toContain(
      'memoryFraction: expected 0.7, got 0.75 (decided by core/core-memory-fraction-balanced)',
    )
    expect(result.stderr).toContain('E_CASES_FAILED')
  })
})

describe('rigfit explain', () => {
  it('shows the rule, pack and facts behind a setting', () => {
    const result = rigfit(['explain', 'compile', '--from', fixture('rdna', 'w7900'), '--json'])
    expect(result.code).toBe(0)
    const out = json(result.stdout)
    expect(out.settings[0]).toMatchObject({
      setting: 'compile',
      value: false,
      decision: {
        provenance: {
          rule: 'rdna-compile-off-known-problems',
          pack: 'rdna',
          layer: 'vendor',
          facts: { gpuCatalogId: 'pro-w7900', gpuFamily: 'rdna' },
        },
      },
    })
    expect(
      out.settings[0].decision.overridden.map((o: { provenance: { rule: string } }) => o.provenance.rule),
    ).toContain('rdna-compile')
    expect(out.facts.gpuFamily).toBe('rdna')
  })

  it('explains every decided setting in words, with caps and --rules packs', () => {
    const result = rigfit([
      'explain',
      '--from',
      fixture('rtx30', 'workstation-2x-rtx3090'),
      '--mode',
      'extreme',
      '--rules',
      example,
    ])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('packs in force: core (core), rtx30 (vendor), shared-lab (user)')
    expect(result.stdout).toMatch(/compile = false\n {2}decided by {2}rtx30\/rtx30-compile-old-driver/)
    expect(result.stdout).toContain('capped at   0.8 by shared-lab/shared-lab-memory-cap (lowered from 0.95)')
  })

  it('reads the trace of a saved plan', () => {
    const planned = rigfit(['plan', '--from', fixture('rdna', 'w7900'), '--json'])
    expect(planned.code).toBe(0)
    const planFile = join(work, 'plan.json')
    writeFileSync(planFile, planned.stdout)
    const result = rigfit(['explain', '--plan', planFile, 'compile.enabled', '--json'])
    expect(result.code).toBe(0)
    expect(json(result.stdout)).toMatchObject({
      source: 'plan',
      trace: [{ setting: 'compile', rule: 'rdna-compile-off-known-problems' }],
    })
  })

  it('refuses an unknown setting with the nearest name, and a missing --rules folder', () => {
    const typo = rigfit(['explain', 'precison', '--from', fixture('cpu', 'vm-2core')])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('Did you mean "precision"?')
    const missing = rigfit([
      'explain',
      'precision',
      '--from',
      fixture('cpu', 'vm-2core'),
      '--rules',
      join(work, 'none'),
    ])
    expect(missing.code).toBe(3)
    expect(missing.stderr).toContain('E_RULES_DIR')
  })
})

describe('docs/rules.md', () => {
  it('describes every fact and every setting a rule may use', async () => {
    const { FACT_NAMES, SETTING_NAMES } = await import('@rigfit/core')
    const doc = readFileSync(join(repo, 'docs/rules.md'), 'utf8')
    const rows = new Set([...doc.matchAll(/^\|\s*`([A-Za-z0-9]+)`\s*\|/gm)].map((match) => match[1]))
    const missing = [...FACT_NAMES, ...SETTING_NAMES].filter((name) => !rows.has(name))
    expect(missing).toEqual([])
  })
})
