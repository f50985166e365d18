import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

// biome-ignore lint/suspicious/noExplicitAny: plans read back from the CLI's JSON output
type Json = any

const work = mkdtempSync(join(tmpdir(), 'rigfit-planning-input-'))
const what = ['--gpu', 'RTX 4090', '--model', 'llama-3.2-1b']
/** The three planning commands, each as a user would run it on what-if hardware. */
const COMMANDS: [string, string[]][] = [
  ['plan', ['plan', ...what]],
  ['analyze', ['analyze', ...what]],
  ['export', ['export', '--mode', 'balanced', '--format', 'hf', ...what]],
]

/** A JSON error on stdout, the exit code of its kind, and nothing else printed. */
function expectJsonError(args: string[], code: string, exit: number) {
  const run = rigfit([...args, '--json'])
  expect(run.status, run.stderr).toBe(exit)
  const { error } = JSON.parse(run.stdout)
  expect(error.code).toBe(code)
  expect(error.suggestion).toEqual(expect.any(String))
  return error
}

describe('bad planning input is refused at the door', () => {
  it.each(COMMANDS)(
    '%s: --price-per-hour below 0 or not a number is a usage error naming the flag',
    (_, args) => {
      for (const price of ['-3', 'abc', 'Infinity', '$-1']) {
        const error = expectJsonError([...args, '--price-per-hour', price], 'E_BAD_PRICE', 2)
        expect(error.message).toContain(`--price-per-hour "${price}"`)
      }
      const human = rigfit([...args, '--price-per-hour', '-3'])
      expect(human.status).toBe(2)
      // Refused before planning: no plan is printed first.
      expect(human.stdout).toBe('')
      expect(human.stderr).toMatch(/^Error \[E_BAD_PRICE\]: --price-per-hour "-3"/m)
    },
  )

  it.each(COMMANDS)(
    '%s: a missing --rules path is an input error with the path, as JSON with --json',
    (_, args) => {
      const error = expectJsonError([...args, '--rules', './nope'], 'E_RULES_DIR', 3)
      expect(error.kind).toBe('input')
      expect(error.message).toContain('./nope')
      const human = rigfit([...args, '--rules', './nope'])
      expect(human.status).toBe(3)
      expect(human.stderr).toMatch(/^Error \[E_RULES_DIR\]: --rules \.\/nope/m)
      expect(human.stderr).toMatch(/^Suggestion: /m)
      expect(human.stderr).not.toMatch(/Parsing --rules|No directory found/)
    },
  )

  it('export --out writes nothing when the input is bad', () => {
    const out = join(work, 'never')
    for (const bad of [
      ['--price-per-hour', '-3'],
      ['--rules', './nope'],
      ['--dataset-size', 'big'],
    ]) {
      expect(
        rigfit(['export', '--mode', 'balanced', '--format', 'hf', ...what, '--out', out, ...bad]).status,
      ).not.toBe(0)
      expect(existsSync(out)).toBe(false)
    }
  })

  it('one size parser: plan and export read 800M as 800MB and refuse the same nonsense', () => {
    const short = rigfitJson(['plan', ...what, '--dataset-size', '800M'])
    const long = rigfitJson(['plan', ...what, '--dataset-size', '800MB'])
    expect(short.tokens).toEqual(long.tokens)
    const exported = rigfitJson([
      'export',
      '--mode',
      'balanced',
      '--format',
      'hf',
      ...what,
      '--dataset-size',
      '800M',
    ])
    const exportedLong = rigfitJson([
      'export',
      '--mode',
      'balanced',
      '--format',
      'hf',
      ...what,
      '--dataset-size',
      '800MB',
    ])
    expect(exported.streaming).toEqual(exportedLong.streaming)
    for (const [name, args] of COMMANDS) {
      const run = rigfit([...args, '--dataset-size', 'big', '--json'])
      expect(run.status, name).toBe(2)
      expect(JSON.parse(run.stdout).error).toMatchObject({ code: 'E_BAD_SIZE' })
      expect(JSON.parse(run.stdout).error.message).toContain('--dataset-size "big"')
    }
  })
})

describe('the plan carries its cost', () => {
  const expectCost = (plan: Json, price: number, nodes = 1) => {
    expect(plan.cost).toMatchObject({ pricePerHour: price, currency: 'USD', nodes })
    expect(plan.cost.total).toBeCloseTo(price * nodes * plan.time.totalHours, 6)
  }

  it('from --price-per-hour or an --instance list price, null without a price, in every command', () => {
    const priced = rigfitJson(['plan', ...what, '--price-per-hour', '2.5'])
    TrainingPlan.parse(priced)
    expectCost(priced, 2.5)
    expect(rigfitJson(['plan', ...what]).cost).toBeNull()
    expectCost(rigfitJson(['plan', ...what, '--price-per-hour', '$2.5', '--nodes', '2']), 2.5, 2)
    expectCost(rigfitJson(['plan', '--instance', 'g5.xlarge', '--model', 'llama-3.2-1b']), 1.006)
    expectCost(
      rigfitJson(['plan', '--instance', 'g5.xlarge', '--model', 'llama-3.2-1b', '--price-per-hour', '0.4']),
      0.4,
    )
    const analyzed = rigfitJson(['analyze', ...what, '--price-per-hour', '3'])
    for (const plan of Object.values(analyzed.plans)) expectCost(plan, 3)
    const human = rigfit(['plan', ...what, '--price-per-hour', '2.5'])
    expect(human.stdout).toMatch(/^Cost: \$\d+\.\d\d at \$2\.5\/h for /m)
  })

  it('export --format rigfit writes the cost into the plan file', () => {
    const out = rigfitJson([
      'export',
      '--mode',
      'balanced',
      '--format',
      'rigfit',
      ...what,
      '--price-per-hour',
      '1.5',
    ])
    const file = out.files.find((f: { path: string }) => f.path.endsWith('.json'))
    expectCost(TrainingPlan.parse(JSON.parse(file.content)), 1.5)
  })
})

describe('a broken rule pack is reported, never skipped silently', () => {
  const packs = join(work, 'packs')
  mkdirSync(join(packs, 'broken', 'rules'), { recursive: true })
  writeFileSync(
    join(packs, 'broken', 'pack.json'),
    JSON.stringify({
      schemaVersion: 1,
      meta: { name: 'broken', version: '1.0.0', description: 'x' },
      appliesTo: null,
    }),
  )
  const badRule = join(packs, 'broken', 'rules', 'bad-compile.json')
  writeFileSync(
    badRule,
    JSON.stringify({
      id: 'bad-compile',
      description: 'compile as a word',
      conditions: { all: [] },
      event: { type: 'set', params: { setting: 'compile', value: 'yes', reason: 'r' } },
    }),
  )
  /** The warning names the file, the rule id and the JSON path, as docs/rules.md promises. */
  const expectNamed = (message: string) => {
    expect(message).toContain(join('broken', 'rules', 'bad-compile.json'))
    expect(message).toContain('rule "bad-compile"')
    expect(message).toContain('$.event.params.value')
  }
  const skipped = (warnings: { id: string; message: string }[]) =>
    warnings.filter((w) => w.id === 'rule-pack-skipped').map((w) => w.message)

  it('named with --rules, it stops plan, analyze and export with the problem, text and JSON', () => {
    for (const command of [
      ['plan', ...what],
      ['analyze', ...what],
      ['export', '--mode', 'balanced', '--format', 'hf', ...what],
    ]) {
      const json = rigfit([...command, '--rules', packs, '--json'])
      expect(json.status, command[0]).toBe(4)
      const error = JSON.parse(json.stdout).error
      expect(error.code).toBe('E_PACK_INVALID')
      expectNamed(error.message)
      const human = rigfit([...command, '--rules', packs])
      expect(human.status).toBe(4)
      expectNamed(human.stderr)
    }
  })

  it('in the config folder, plan, analyze and export skip it and carry the warning in JSON and text', () => {
    const config = join(work, 'config-home')
    mkdirSync(join(config, 'rigfit'), { recursive: true })
    cpSync(packs, join(config, 'rigfit', 'rules'), { recursive: true })
    const env = { XDG_CONFIG_HOME: config }
    const plan = rigfitJson(['plan', ...what], undefined, env)
    expect(skipped(plan.warnings)).toHaveLength(1)
    expectNamed(skipped(plan.warnings)[0] as string)
    const analyzed = rigfitJson(['analyze', ...what], undefined, env)
    expectNamed(skipped(analyzed.warnings)[0] as string)
    for (const mode of Object.values(analyzed.plans) as Json[]) expect(skipped(mode.warnings)).toHaveLength(1)
    const exported = rigfitJson(['export', '--mode', 'balanced', '--format', 'hf', ...what], undefined, env)
    expectNamed(skipped(exported.warnings)[0] as string)
    const human = rigfit(['plan', ...what], undefined, env)
    expect(human.status).toBe(0)
    expectNamed(human.stdout)
  })
})
