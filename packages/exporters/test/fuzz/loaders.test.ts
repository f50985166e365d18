import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type HardwareProfile,
  isRigfitError,
  MAX_CONFIG_INTEGER,
  ModelSpec,
  modelSpecFromHfConfig,
  parseSingleFilePack,
  type RulePack,
  type TrainingPlan,
} from '@rigfit/core'
import {
  type FuzzResult,
  type FuzzTarget,
  fuzzReport,
  fuzzSettings,
  fuzzTimeoutMs,
  mutatedJson,
  runTarget,
} from '@rigfit/fuzz-kit'
import { parseProfileText } from '@rigfit/profiler'
import { afterAll, describe, expect, it } from 'vitest'
import { parsePlan } from '../../src/load-plan.js'

/**
 * The loaders of what users hand rigfit — an HF config.json, a saved profile, a plan, a rule pack — fed mutated
 * real documents: numbers made huge, negative or fractional, keys renamed, values of the wrong type, text cut
 * short. A loader may refuse an input with its typed error (that is an answer); it may not crash, and what it
 * accepts must lie in the ranges rigfit documents, checked here independently of the schemas.
 */
const { runs, report } = fuzzSettings()
const results: FuzzResult[] = []
const require = createRequire(import.meta.url)
const here = dirname(fileURLToPath(import.meta.url))
const repo = join(here, '..', '..', '..', '..')

const REFUSED = Symbol('refused')

/** The loader's answer, or REFUSED when it rejected the input with a RigfitError. */
function refusing<T>(load: (text: string) => T): (text: string) => T | typeof REFUSED {
  return (text) => {
    try {
      return load(text)
    } catch (error) {
      if (isRigfitError(error)) return REFUSED
      throw error
    }
  }
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => readFileSync(join(dir, name), 'utf8'))
}

function within(value: number, min: number, max: number, what: string): void {
  if (!(Number.isFinite(value) && value >= min && value <= max))
    throw new Error(`${what} = ${value} accepted`)
}

function positiveInt(value: number, max: number, what: string): void {
  if (!Number.isInteger(value)) throw new Error(`${what} = ${value} accepted (not whole)`)
  within(value, 1, max, what)
}

// Seeds: the HF configs in the validation data and the example trainer's, every plugin's fixture profile, the
// committed fixture plans, and every plugin's pack as one single-file pack.
const hfConfigs = [
  readFileSync(join(repo, 'examples', 'pytorch', 'tiny-llama.json'), 'utf8'),
  ...readFileSync(join(repo, 'packages', 'core', 'validation', 'published.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.includes('"config"'))
    .map((line) => JSON.stringify((JSON.parse(line) as { model: { config: unknown } }).model.config)),
]
const pluginDirs = readdirSync(join(repo, 'plugins')).map((name) => join(repo, 'plugins', name))
const profiles = pluginDirs.flatMap((dir) => jsonFiles(join(dir, 'fixtures')))
const plans = jsonFiles(join(here, '..', 'fixtures', 'plans'))
const packs = pluginDirs.map((dir) =>
  JSON.stringify({
    ...(JSON.parse(readFileSync(join(dir, 'pack.json'), 'utf8')) as object),
    rules: jsonFiles(join(dir, 'rules')).map((text) => JSON.parse(text) as unknown),
  }),
)
const packSource = { layer: 'user' as const, origin: { kind: 'user' as const, path: '/fuzz', plugin: null } }

function target<T>(
  name: string,
  seeds: string[],
  load: (text: string) => T,
  check: (answer: T) => void,
): FuzzTarget {
  const parse = refusing(load)
  return {
    name,
    input: mutatedJson(seeds),
    parse,
    check: (answer) => {
      if (answer !== REFUSED) check(answer as T)
    },
  }
}

const TARGETS: FuzzTarget[] = [
  target(
    'hf config.json',
    hfConfigs,
    (text) => {
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return REFUSED
      }
      return modelSpecFromHfConfig(json, 'config.json')
    },
    (spec) => {
      if (spec === REFUSED) return
      ModelSpec.parse(spec)
      for (const key of ['layers', 'hidden', 'heads', 'kvHeads', 'ffn', 'vocab', 'maxPositions'] as const) {
        const value = (spec as unknown as Record<string, number | undefined>)[key]
        if (value !== undefined) positiveInt(value, MAX_CONFIG_INTEGER, key)
      }
    },
  ),
  target(
    'profile (--from)',
    profiles,
    (text) => parseProfileText(text, 'profile.json'),
    (profile: HardwareProfile) => {
      positiveInt(profile.cpu.physicalCores, 65_536, 'cpu.physicalCores')
      positiveInt(profile.cpu.logicalCores, 65_536, 'cpu.logicalCores')
      within(profile.cpu.usableCores, Number.MIN_VALUE, 65_536, 'cpu.usableCores')
      for (const [key, value] of Object.entries(profile.memory)) {
        if (typeof value === 'number') within(value, 0, Number.MAX_SAFE_INTEGER, `memory.${key}`)
      }
      for (const gpu of profile.gpus) {
        within(gpu.index, 0, 1023, 'gpus[].index')
        within(gpu.vramTotalBytes, 0, Number.MAX_SAFE_INTEGER, 'gpus[].vramTotalBytes')
      }
    },
  ),
  target(
    'plan (--plan)',
    plans,
    (text) => parsePlan(text, 'plan.json'),
    (plan: TrainingPlan) => {
      const s = plan.settings
      positiveInt(s.microBatch, 65_536, 'settings.microBatch')
      positiveInt(s.gradAccum, 1_000_000, 'settings.gradAccum')
      positiveInt(s.seq, 10_000_000, 'settings.seq')
      within(s.gpus, 0, 1024, 'settings.gpus')
      positiveInt(s.nodes, 100_000, 'settings.nodes')
      within(plan.memory.perDevice.total, 0, Number.MAX_SAFE_INTEGER, 'memory.perDevice.total')
    },
  ),
  target(
    'rule pack (single file)',
    packs,
    (text) => {
      const result = parseSingleFilePack({ file: 'pack.json', text }, packSource)
      return result.pack === null ? REFUSED : result.pack
    },
    (pack) => {
      if (pack === REFUSED) return
      for (const rule of (pack as unknown as { rules: RulePack['rules'] }).rules) {
        const event = rule.event
        if (event.type !== 'set' && event.type !== 'cap') continue
        const value = event.type === 'set' ? event.params.value : event.params.max
        if (typeof value !== 'number') continue
        const setting = event.params.setting
        if (setting === 'gpus') positiveInt(value, 1024, `${rule.id}: gpus`)
        if (setting === 'microBatch') positiveInt(value, 65_536, `${rule.id}: microBatch`)
        if (setting === 'memoryFraction') within(value, 0.05, 1, `${rule.id}: memoryFraction`)
      }
    },
  ),
]

describe('fuzz: the loaders of user documents', () => {
  it('has seeds for every loader', () => {
    expect(hfConfigs.length).toBeGreaterThan(3)
    expect(profiles.length).toBeGreaterThan(10)
    expect(plans.length).toBeGreaterThan(5)
    expect(packs.length).toBe(pluginDirs.length)
    expect(require.resolve('@rigfit/fuzz-kit')).toBeTruthy()
  })

  it.each(TARGETS.map((t) => ({ name: t.name, t })))(
    '$name: no crash, nothing out of range accepted',
    ({ t }) => {
      const result = runTarget(t, results)
      expect(result.inputs).toBe(runs)
      expect(result.crashes).toEqual([])
      expect(result.violations).toEqual([])
    },
    fuzzTimeoutMs(runs),
  )

  afterAll(() => {
    if (report) console.log(fuzzReport(results, 'loader'))
  })
})
