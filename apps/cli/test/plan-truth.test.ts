import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SETTING_PLAN_PATHS, type SettingName, type TrainingPlan, traceFor } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { workspaceFixture } from './helpers/workspace-fixtures.js'

const cli = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const machinesDir = workspaceFixture('@rigfit/core', 'machines')
const configHome = mkdtempSync(join(tmpdir(), 'rigfit-config-'))

function rigfit(args: string[]) {
  const result = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', XDG_CONFIG_HOME: configHome },
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}
function json<T>(args: string[]): T {
  const result = rigfit([...args, '--json'])
  expect(result.status, result.stdout + result.stderr).toBe(0)
  return JSON.parse(result.stdout) as T
}

/** A setting's value in the plan: its settings path, or where the plan keeps the two budget shares. */
function planValue(plan: TrainingPlan, name: SettingName): unknown {
  if (name === 'memoryFraction') return plan.memory.budgetFraction
  if (name === 'powerFraction') return traceFor(plan.trace, name).at(-1)?.value
  return SETTING_PLAN_PATHS[name]
    .split('.')
    .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], plan.settings)
}

interface ExplainedRules {
  source: 'rules'
  plan: 'generated' | null
  settings: { setting: SettingName; value: unknown }[]
}
interface ExplainedTrace {
  source: 'plan'
  trace: { setting: string; value: unknown }[]
}

/** Flags of the plans a user reported `explain` contradicting. */
const FLAG_SETS = [
  [
    '--gpu',
    'RTX 4090',
    '--model',
    'llama-3-8b',
    '--method',
    'lora',
    '--seq',
    '1024',
    '--dataset-size',
    '200MB',
    '--mode',
    'extreme',
  ],
  ['--from', join(machinesDir, 'vm-2core-xeon.json'), '--mode', 'balanced'],
  ['--instance', 'p4d.24xlarge', '--model', 'llama-3.1-8b', '--mode', 'balanced'],
]

describe('explain reads the plan made with the same flags', () => {
  it.each(FLAG_SETS.map((flags) => [flags.join(' '), flags]))(
    '%s: every setting the packs decide has the plan value',
    (_, flags) => {
      const plan = json<TrainingPlan>(['plan', ...flags])
      const explained = json<ExplainedRules>(['explain', ...flags])
      expect(explained.plan).toBe('generated')
      expect(explained.settings.length).toBeGreaterThan(10)
      for (const item of explained.settings) {
        expect(item.value, item.setting).toEqual(planValue(plan, item.setting))
      }
    },
  )

  it('explain gradCheckpointing on the reported 4090 LoRA plan says true, as the plan does, and why', () => {
    const flags = FLAG_SETS[0] as string[]
    const plan = json<TrainingPlan>(['plan', ...flags])
    expect(plan.settings.gradCheckpointing).toBe(true)
    const human = rigfit(['explain', 'gradCheckpointing', ...flags])
    expect(human.stdout).toMatch(/^gradCheckpointing = true$/m)
    expect(human.stdout).toMatch(/rule said {3}false: core\/core-grad-checkpointing-large-memory/)
  })

  it('settings only plans have (strategy, effective batch, learning rate) come from the same plan and trace', () => {
    const flags = FLAG_SETS[2] as string[]
    const plan = json<TrainingPlan>(['plan', ...flags])
    for (const setting of ['strategy', 'effectiveBatch', 'learningRate', 'gradAccum'] as const) {
      const explained = json<ExplainedTrace>(['explain', setting, ...flags])
      expect(explained.trace.at(-1)?.value, setting).toEqual(plan.settings[setting])
    }
    // Eight ranks share the p4d's 96 vCPUs: threads are per rank, never the whole node.
    expect(plan.settings.threads).toBeLessThanOrEqual(96 / 8)
  })

  it('explain --plan FILE reads the saved plan', () => {
    const flags = FLAG_SETS[1] as string[]
    const planned = rigfit(['plan', ...flags, '--json'])
    const file = join(mkdtempSync(join(tmpdir(), 'rigfit-explain-')), 'plan.json')
    writeFileSync(file, planned.stdout)
    const plan = JSON.parse(planned.stdout) as TrainingPlan
    const explained = json<ExplainedTrace>(['explain', '--plan', file, 'persistentWorkers'])
    expect(explained.trace.at(-1)?.value).toBe(plan.settings.dataloader.persistentWorkers)
  })
})

describe('rigfit exports the plans it makes', () => {
  it('the export --help example: an extreme single-GPU fine-tune exports to DeepSpeed as ZeRO-Offload or plain', () => {
    const args = ['--mode', 'extreme', '--gpu', 'RTX 4090', '--model', 'llama-3.2-1b']
    const plan = json<TrainingPlan>(['plan', ...args])
    expect(['single', 'zero-offload']).toContain(plan.settings.strategy)
    const out = rigfit(['export', ...args, '--format', 'deepspeed', '--json'])
    expect(out.status, out.stdout + out.stderr).toBe(0)
  })

  it('single-GPU extreme plans that offload are zero-offload plans every format accepts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rigfit-truth-'))
    const out = join(dir, 'configs')
    const analyze = rigfit([
      'analyze',
      '--gpu',
      'RTX 4090',
      '--model',
      'llama-3.1-8b',
      '--generate-configs',
      '--out',
      out,
    ])
    expect(analyze.status, analyze.stdout + analyze.stderr).toBe(0)
    expect(readdirSync(join(out, 'extreme')).length).toBeGreaterThan(0)
    const extreme = json<TrainingPlan>([
      'plan',
      '--mode',
      'extreme',
      '--gpu',
      'RTX 4090',
      '--model',
      'llama-3.1-8b',
    ])
    if (extreme.settings.offload !== 'none') expect(extreme.settings.strategy).toBe('zero-offload')
    const rigfitFormat = rigfit([
      'export',
      '--mode',
      'extreme',
      '--instance',
      'g5.xlarge',
      '--model',
      'llama-3.1-8b',
      '--format',
      'rigfit',
      '--json',
    ])
    expect(rigfitFormat.status, rigfitFormat.stdout + rigfitFormat.stderr).toBe(0)
  })
})

describe('export --mode --nodes N exports the plan `plan --nodes N` prints', () => {
  /** The plan without the time it was made: two runs of the planner differ in nothing else. */
  const undated = (plan: TrainingPlan) => ({ ...plan, createdAt: null })

  it.each([
    ['--gpu', 'A100 80GB', '--gpus', '4', '--nodes', '2', '--model', 'llama-3.1-8b', '--mode', 'balanced'],
    ['--gpu', 'RTX 4090', '--gpus', '2', '--nodes', '3', '--model', 'gpt2', '--mode', 'extreme'],
    ['--instance', 'p4d.24xlarge', '--nodes', '2', '--model', 'qwen2.5-1.5b', '--mode', 'conservative'],
    ['--gpu', 'H100', '--gpus', '8', '--nodes', '2', '--params', '1B', '--mode', 'balanced'],
  ])('%s %s %s %s %s %s ...', (...flags) => {
    // `export --format rigfit` plans for the stack rigfit's trainer is, a plain PyTorch loop: so does this plan.
    const plan = json<TrainingPlan>(['plan', ...flags, '--stack', 'plain'])
    const nodes = Number(flags[flags.indexOf('--nodes') + 1])
    expect(plan.settings.nodes).toBe(nodes)
    const exported = json<{ files: { path: string; content: string }[] }>([
      'export',
      ...flags,
      '--format',
      'rigfit',
    ])
    const file = exported.files.find((f) => f.path === 'rigfit-plan.json')
    expect(file).toBeDefined()
    expect(undated(JSON.parse(file?.content ?? '{}') as TrainingPlan)).toEqual(undated(plan))
  })
})

describe('analyze shows each mode its own warning', () => {
  it('a time budget that binds every mode: each mode keeps the figures of its own plan', () => {
    type Advice = { id: string; message: string; modes: string[] }
    const out = json<{ plans: Record<string, TrainingPlan>; warnings: Advice[] }>([
      'analyze',
      '--from',
      join(machinesDir, 'vm-2core-xeon.json'),
      '--time-budget',
      '2h',
    ])
    let seen = 0
    for (const [mode, plan] of Object.entries(out.plans)) {
      const own = plan.warnings.find((w) => w.id === 'time-budget-binds')
      if (!own) continue
      seen += 1
      expect(own.message).not.toMatch(/0\.00B/)
      const shown = out.warnings.find((w) => w.message === own.message)
      expect(shown?.modes, mode).toContain(mode)
    }
    expect(seen).toBeGreaterThan(1)
  })
})
