import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

// Values out of their real range are refused where they enter — naming the file, the rule and the JSON path —
// instead of being accepted and breaking a plan later.
const repo = fileURLToPath(new URL('../../..', import.meta.url))
const cli = join(repo, 'apps', 'cli', 'bin', 'run.js')
const fixture = join(repo, 'plugins', 'cpu', 'fixtures', 'vm-2core.json')
const work = mkdtempSync(join(tmpdir(), 'rigfit-ranges-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

function pack(root: string, name: string, event: object): string {
  const dir = join(root, name)
  mkdirSync(join(dir, 'rules'), { recursive: true })
  writeFileSync(
    join(dir, 'pack.json'),
    JSON.stringify({ schemaVersion: 1, meta: { name, version: '1.0.0', description: 'd' }, appliesTo: null }),
  )
  writeFileSync(
    join(dir, 'rules', 'r.json'),
    JSON.stringify({ id: 'r', description: 'd', conditions: { all: [] }, event }),
  )
  return dir
}

// A profile file as JSON, edited by hand as a broken file would be.
type ProfileJson = { cpu: Record<string, number>; memory: Record<string, number> }

const BAD_PACKS: [string, object, string][] = [
  ['cap gpus 0', { type: 'cap', params: { setting: 'gpus', max: 0, reason: 'x' } }, '$.event.params.max'],
  [
    'cap memoryFraction 1e-300',
    { type: 'cap', params: { setting: 'memoryFraction', max: 1e-300, reason: 'x' } },
    '$.event.params.max',
  ],
  [
    'set memoryFraction -5',
    { type: 'set', params: { setting: 'memoryFraction', value: -5, reason: 'x' } },
    '$.event.params.value',
  ],
  [
    'set memoryFraction 1e-300',
    { type: 'set', params: { setting: 'memoryFraction', value: 1e-300, reason: 'x' } },
    '$.event.params.value',
  ],
  [
    'set microBatch 0.5',
    { type: 'set', params: { setting: 'microBatch', value: 0.5, reason: 'x' } },
    '$.event.params.value',
  ],
  [
    'cap microBatch 0',
    { type: 'cap', params: { setting: 'microBatch', max: 0, reason: 'x' } },
    '$.event.params.max',
  ],
]

describe('rule packs: out-of-range values are refused at the door', () => {
  it.each(BAD_PACKS)('%s: rules validate fails naming file, rule and path', (name, event, path) => {
    const dir = pack(join(work, 'validate'), name.replace(/[^a-z0-9]+/gi, '-').toLowerCase(), event)
    const run = rigfit(['rules', 'validate', dir])
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain('rules/r.json')
    expect(run.stderr).toContain('rule "r"')
    expect(run.stderr).toContain(path)
  })

  it.each(BAD_PACKS)(
    '%s: plan --rules fails (text and --json) instead of planning without the pack',
    (name, event, path) => {
      const dir = pack(join(work, 'plan'), name.replace(/[^a-z0-9]+/gi, '-').toLowerCase(), event)
      const text = rigfit(['plan', '--from', fixture, '--gpu', 'RTX 4090', '--rules', dir])
      expect(text.status).not.toBe(0)
      expect(text.stderr).toContain('E_PACK_INVALID')
      expect(text.stderr).toContain(path)
      const json = rigfit(['plan', '--from', fixture, '--gpu', 'RTX 4090', '--rules', dir, '--json'])
      expect(json.status).not.toBe(0)
      const error = JSON.parse(json.stdout).error
      expect(error.code).toBe('E_PACK_INVALID')
      expect(error.message).toContain(path)
    },
  )

  it('a broken pack in the config folder is skipped with a warning naming file, rule and path, text and JSON', () => {
    const config = join(work, 'config')
    pack(join(config, 'rigfit', 'rules'), 'capzero', BAD_PACKS[0]?.[1] as object)
    const env = { ...process.env, NO_COLOR: '1', XDG_CONFIG_HOME: config }
    const text = spawnSync(process.execPath, [cli, 'plan', '--from', fixture, '--gpu', 'RTX 4090'], {
      encoding: 'utf8',
      env,
    })
    expect(text.status).toBe(0)
    expect(text.stdout + text.stderr).toMatch(
      /capzero\/rules\/r\.json: rule "r" at \$\.event\.params\.max: 0 is not a valid cap/,
    )
    const json = spawnSync(
      process.execPath,
      [cli, 'plan', '--from', fixture, '--gpu', 'RTX 4090', '--json'],
      { encoding: 'utf8', env },
    )
    expect(json.status).toBe(0)
    const plan = JSON.parse(json.stdout)
    const warning = plan.warnings.find((w: { id: string }) => w.id === 'rule-pack-skipped')
    expect(warning.message).toContain('$.event.params.max')
    // The plan itself is sane: the broken cap did not reach it.
    expect(plan.hardware.gpus).toBe(1)
    expect(plan.hardware.summary).not.toContain('Infinity')
  })
})

describe('documents: out-of-range values are refused when read, with their JSON path', () => {
  it('an HF config with n_layer 1e308 names the key', () => {
    const config = join(work, 'config.json')
    writeFileSync(
      config,
      '{"model_type":"gpt2","n_layer":1e308,"n_embd":768,"n_head":12,"vocab_size":50257,"n_positions":1024}',
    )
    const run = rigfit([
      'estimate',
      '--model',
      config,
      '--gpu',
      'RTX 4090',
      '--seq',
      '1024',
      '--micro-batch',
      '1',
    ])
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(/"n_layer" must be a positive integer up to 10,000,000, got 1e\+308/)
  })

  it.each([
    [
      'cpu.usableCores',
      (p: ProfileJson) => {
        p.cpu.usableCores = 1e308
      },
    ],
    [
      'cpu.logicalCores',
      (p: ProfileJson) => {
        p.cpu.logicalCores = 0.5
      },
    ],
    [
      'memory.totalBytes',
      (p: ProfileJson) => {
        p.memory.totalBytes = -1
      },
    ],
    [
      'cpu.boostGHz',
      (p: ProfileJson) => {
        p.cpu.boostGHz = 1e31
      },
    ],
  ])(
    'a profile with an impossible %s is refused by --from with its path, never an internal name',
    (path, edit) => {
      const profile = JSON.parse(readFileSync(fixture, 'utf8'))
      edit(profile)
      const file = join(work, `${path}.json`)
      writeFileSync(file, JSON.stringify(profile))
      const run = rigfit(['plan', '--from', file])
      expect(run.status).not.toBe(0)
      expect(run.stderr).toContain('E_PROFILE_INVALID')
      expect(run.stderr).toContain(path)
      expect(run.stderr).not.toContain('deriveFacts')
    },
  )
})
