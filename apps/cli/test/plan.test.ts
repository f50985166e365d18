import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BUDGET_TOLERANCE, checkPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { workspaceFixture } from './helpers/workspace-fixtures.js'

// biome-ignore lint/suspicious/noExplicitAny: plans read back from the CLI's JSON output
type Json = any

const cli = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const machinesDir = workspaceFixture('@rigfit/core', 'machines')
const machines = readdirSync(machinesDir)
  .filter((file) => file.endsWith('.json'))
  .sort()

// An empty config dir: a developer's own community packs must not change these plans.
const configHome = mkdtempSync(join(tmpdir(), 'rigfit-config-'))

function rigfit(args: string[], cwd?: string) {
  const result = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, NO_COLOR: '1', XDG_CONFIG_HOME: configHome },
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}
function json(args: string[]) {
  const result = rigfit([...args, '--json'])
  expect(result.stderr).not.toMatch(/Error/)
  expect(result.status).toBe(0)
  return JSON.parse(result.stdout)
}

/** The parts of a plan a reader checks: stable across runs, rounded so that tiny model changes show as diffs. */
function summary(plan: Json) {
  const s = plan.settings
  return {
    model: `${Math.round(plan.params.total / 1e6)}M ${plan.model.layers}x${plan.model.hidden}`,
    method: s.method,
    device: `${s.device} x${s.gpus} ${s.strategy} ${s.backend}`,
    batch: `${s.microBatch} x ${s.gradAccum} = ${s.effectiveBatch} @ ${s.seq}`,
    precision: `${s.precision}${s.tf32 ? ' tf32' : ''}`,
    memory: `${s.gradCheckpointing ? 'ckpt ' : ''}${s.sharding} ${s.offload} ${s.attention} ${Math.round(plan.memory.usedFraction * 100)}% of ${(plan.memory.capacityBytes / 2 ** 30).toFixed(1)} GiB`,
    runtime: `compile ${s.compile.enabled ? s.compile.mode : 'off'}, ${s.dataloader.workers} workers, pin ${s.dataloader.pinMemory}`,
  }
}

describe('rigfit analyze: three plans for each fixture machine', () => {
  for (const file of machines) {
    it(`${file.replace(/\.json$/, '')}`, () => {
      const out = json(['analyze', '--from', join(machinesDir, file)])
      const plans = out.plans as Record<string, Json>
      const modes = ['conservative', 'balanced', 'extreme'] as const
      for (const mode of modes) {
        const plan = plans[mode]
        expect(plan.mode).toBe(mode)
        // Every plan fits its device by the estimator, within the mode's budget and its tolerance.
        expect(plan.memory.perDevice.total).toBeLessThanOrEqual(
          plan.memory.capacityBytes * plan.memory.budgetFraction * (1 + BUDGET_TOLERANCE),
        )
        // Every plan is one the trainers can run: the exporters' consistency checks pass.
        expect(checkPlan(plan)).toEqual([])
        // A reader can see why each setting was chosen.
        for (const setting of ['precision', 'microBatch', 'seq', 'compile']) {
          expect(plan.trace.some((entry: { setting: string }) => entry.setting === setting)).toBe(true)
        }
      }
      // Each mode trains a larger model than the one before. (Memory need not grow with it: extreme fills
      // memory with the largest micro-batch among the fastest setups, never by recomputing or offloading.)
      const params = modes.map((mode) => plans[mode].params.total)
      expect(params[0]).toBeLessThanOrEqual(params[1])
      expect(params[1]).toBeLessThanOrEqual(params[2])
      expect(out.score.score).toBeGreaterThanOrEqual(0)
      expect(out.score.score).toBeLessThanOrEqual(10)
      expect(Object.fromEntries(modes.map((mode) => [mode, summary(plans[mode])]))).toMatchSnapshot()
    })
  }
})

describe('rigfit analyze and plan on this machine and what-if hardware', () => {
  it('analyze on this machine plans for the GPUs it found (the CPU when none), with honest times, and names them', () => {
    const out = json(['analyze'])
    const gpus: Json[] = out.profile.gpus
    for (const mode of ['conservative', 'balanced', 'extreme']) {
      const settings = out.plans[mode].settings
      expect(settings.gpus).toBeLessThanOrEqual(gpus.length)
      expect(settings.device === 'cpu', `${mode}: device ${settings.device} on ${settings.gpus} GPUs`).toBe(
        settings.gpus === 0,
      )
      expect(out.plans[mode].time.totalHours).toBeGreaterThan(0)
    }
    const human = rigfit(['analyze'])
    expect(human.status).toBe(0)
    if (gpus.length === 0) expect(human.stdout).toMatch(/GPU: none found/)
    for (const gpu of gpus) expect(human.stdout).toContain(`GPU ${gpu.index}: ${gpu.name}`)
    expect(human.stdout).toMatch(/CONSERVATIVE\s+BALANCED\s+EXTREME/)
  })

  it('plan --gpu "RTX 3060 12GB" --gpus 2 plans for hardware this machine does not have', () => {
    const plan = json(['plan', '--mode', 'extreme', '--gpu', 'RTX 3060 12GB', '--gpus', '2'])
    expect(plan.hardware.gpus).toBe(2)
    expect(plan.hardware.gpuName).toMatch(/3060/)
    expect(plan.settings.backend).toBe('nccl')
    expect(plan.settings.precision).toBe('bf16-mixed')
  })

  it('plan --instance uses the cloud preset and prices the run', () => {
    const plan = json(['plan', '--mode', 'balanced', '--instance', 'p4d.24xlarge'])
    expect(plan.hardware.gpus).toBe(8)
    expect(plan.hardware.gpuName).toMatch(/A100/)
    expect(plan.cost).toMatchObject({ pricePerHour: 32.77, currency: 'USD', nodes: 1 })
    expect(plan.cost.total).toBeCloseTo(32.77 * plan.time.totalHours, 6)
    const human = rigfit(['plan', '--mode', 'balanced', '--instance', 'p4d.24xlarge'])
    expect(human.stdout).toMatch(/Cost: \$\d+\.\d\d at \$32.77\/h/)
  })

  it('plan --recommend ranks hardware that finishes within the budget', () => {
    const out = json([
      'plan',
      '--model',
      'gpt2',
      '--time-budget',
      '2h',
      '--dataset-size',
      '200MB',
      '--recommend',
      // One price for every GPU: ranked by time (without it, by the cost at list price: recommend.test.ts).
      '--price-per-hour',
      '1',
    ])
    expect(out.rankedBy).toBe('time')
    expect(out.ranked.length).toBeGreaterThan(0)
    const hours = out.ranked.map((r: { hours: number }) => r.hours)
    expect(hours).toEqual([...hours].sort((a, b) => a - b))
    expect(hours.every((h: number) => h <= 2)).toBe(true)
    expect(out.ranked.some((r: { kind: string }) => r.kind === 'cloud')).toBe(true)
  })

  it('plan --model-type resnet18 applies the AUTO heuristic and says it is one', () => {
    const out = json(['plan', '--model-type', 'resnet18', '--gpu', 'H100', '--target-batch', '512'])
    expect(out.heuristic).toBe(true)
    expect(out.note).toMatch(/heuristic/)
    expect(out.microBatch * out.gradAccum).toBe(512)
  })

  it('refuses bad input with a code, a suggestion and distinct exit codes', () => {
    const unknownGpu = rigfit(['plan', '--gpu', 'Voodoo 5 6000'])
    expect(unknownGpu.status).toBe(3)
    expect(unknownGpu.stderr).toMatch(/Voodoo 5 6000/)
    expect(unknownGpu.stderr).toMatch(/Suggestion:/)
    const badDuration = rigfit(['plan', '--time-budget', 'soon'])
    expect(badDuration.status).toBe(2)
    expect(badDuration.stderr).toMatch(/--time-budget "soon"/)
    const recommendWithoutBudget = rigfit(['plan', '--recommend', '--json'])
    expect(recommendWithoutBudget.status).toBe(2)
    expect(JSON.parse(recommendWithoutBudget.stdout).error.code).toBe('E_RECOMMEND_NEEDS_BUDGET')
    const tooBig = rigfit([
      'plan',
      '--mode',
      'conservative',
      '--gpu',
      'T4',
      '--model',
      'llama-2-70b',
      '--method',
      'full',
    ])
    expect(tooBig.status).toBe(10)
    expect(tooBig.stderr).toMatch(/No conservative configuration fits/)
  })

  it('analyze --generate-configs writes each plan and its configs, and never overwrites without --force', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rigfit-configs-'))
    const out = join(dir, 'configs')
    const first = rigfit(['analyze', '--generate-configs', '--out', out])
    expect(first.status).toBe(0)
    for (const mode of ['conservative', 'balanced', 'extreme']) {
      expect(existsSync(join(out, mode))).toBe(true)
    }
    const planFile = readdirSync(join(out, 'balanced')).find((name) => name.endsWith('.json'))
    expect(planFile).toBeDefined()
    const before = readFileSync(join(out, 'balanced', planFile as string), 'utf8')
    const second = rigfit(['analyze', '--generate-configs', '--out', out])
    expect(second.status).toBe(8)
    expect(readFileSync(join(out, 'balanced', planFile as string), 'utf8')).toBe(before)
    expect(rigfit(['analyze', '--generate-configs', '--out', out, '--force']).status).toBe(0)
  })

  it('export --mode plans and exports in one step; without --mode or --plan it says which is missing', () => {
    const out = json(['export', '--mode', 'balanced', '--gpu', 'RTX 4090', '--format', 'hf'])
    const args = JSON.parse(out.files.find((file: { path: string }) => file.path.endsWith('.json')).content)
    expect(args.bf16).toBe(true)
    expect(args.per_device_train_batch_size * args.gradient_accumulation_steps).toBeGreaterThan(0)
    const missing = rigfit(['export', '--format', 'hf'])
    expect(missing.status).toBe(2)
    expect(missing.stderr).toMatch(/--mode M or --plan FILE/)
  })

  it('plan --cluster plans every node as the weakest and warns when nodes differ', () => {
    const strong = join(machinesDir, 'server-4x-a100-40gb.json')
    const weak = join(machinesDir, 'server-a100-40gb.json')
    const plan = json(['plan', '--mode', 'balanced', '--cluster', strong, weak])
    expect(plan.settings.nodes).toBe(2)
    expect(plan.settings.gpus).toBe(1)
    expect(plan.settings.effectiveBatch).toBe(plan.settings.microBatch * plan.settings.gradAccum * 2)
    expect(plan.warnings[0].id).toBe('heterogeneous-cluster')
    const same = json(['plan', '--mode', 'balanced', '--cluster', strong, strong])
    expect(same.settings.gpus).toBe(4)
    expect(same.warnings.map((w: { id: string }) => w.id)).not.toContain('heterogeneous-cluster')
    expect(rigfit(['plan', '--cluster', strong]).status).toBe(2)
  })

  it('explain shows the search step behind a setting no rule sets, and the rule behind one a rule sets', () => {
    const searched = json(['explain', 'microBatch', '--mode', 'extreme', '--gpu', 'RTX 4090'])
    expect(searched.source).toBe('plan')
    expect(searched.trace[0]).toMatchObject({ setting: 'microBatch', pack: 'generator', layer: 'generator' })
    expect(searched.trace[0].facts.candidatesEvaluated).toBeGreaterThan(0)
    const model = json(['explain', 'model', '--mode', 'balanced', '--gpu', 'A100 80GB'])
    expect(model.trace[0].setting).toBe('model')
    const ruled = json(['explain', 'precision', '--gpu', 'T4'])
    expect(ruled.source).toBe('rules')
    expect(ruled.settings[0].decision.value).toBe('fp16-mixed')
    const typo = rigfit(['explain', 'microbatchsize'])
    expect(typo.status).toBe(2)
    expect(typo.stderr).toMatch(/Did you mean/)
  })

  it('plans frozen companion models beside the trained one (--frozen-model)', () => {
    const args = [
      'plan',
      '--model',
      'gpt2',
      '--method',
      'full',
      '--frozen-model',
      'llama-3.1-8b',
      '--frozen-model',
      'qwen2.5-7b',
      '--gpu',
      'RTX 3090',
      '--gpus',
      '2',
    ]
    const plan = json(args)
    expect(plan.settings.strategy).toBe('model-split')
    expect(plan.placement).toHaveLength(2)
    expect(plan.placement.flatMap((device: { models: string[] }) => device.models).sort()).toEqual([
      'gpt2',
      'llama-3.1-8b',
      'qwen2.5-7b',
    ])
    expect(rigfit(args).stdout).toMatch(/Placement:\n\s+GPU 0: gpt2/)
  })
})
