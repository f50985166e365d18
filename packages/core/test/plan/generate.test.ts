import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { RigfitError } from '../../src/errors.js'
import { resolveModel } from '../../src/node/resolve-model.js'
import { generatePlan } from '../../src/plan/generate.js'
import { MODES } from '../../src/plan/modes.js'
import { BUDGET_TOLERANCE } from '../../src/plan/search.js'
import { decide } from '../../src/rules/decide.js'
import { deriveFacts } from '../../src/rules/derive-facts.js'
import type { Mode } from '../../src/schemas/common.js'
import type { Decisions } from '../../src/schemas/decisions.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import { TrainingPlan } from '../../src/schemas/training-plan.js'
import { WORKLOAD_SCHEMA_VERSION, type Workload } from '../../src/schemas/workload.js'
import { pretrain } from '../helpers/workloads.js'

const machinesDir = new URL('../fixtures/machines/', import.meta.url)
const machine = (name: string) =>
  HardwareProfile.parse(JSON.parse(readFileSync(new URL(`${name}.json`, machinesDir), 'utf8')))
const machineNames = readdirSync(machinesDir).map((file) => file.replace(/\.json$/, ''))

async function planFor(
  profile: HardwareProfile,
  workload: Workload,
  mode: Mode,
  edit?: (d: Decisions) => Decisions,
) {
  const decisions = await decide([], deriveFacts(profile, workload, mode))
  return generatePlan({
    profile,
    workload,
    mode,
    decisions: edit ? edit(decisions) : decisions,
    options: { createdAt: 'fixed' },
  })
}

describe('generatePlan on every fixture machine', () => {
  for (const name of machineNames) {
    it(`${name}: valid plans that fit, with memory conservative <= balanced <= extreme`, async () => {
      const profile = machine(name)
      const plans = []
      for (const mode of MODES) {
        const plan = await planFor(profile, pretrain(), mode)
        expect(TrainingPlan.safeParse(plan).success).toBe(true)
        // The mode's line is a target with a tolerance (BUDGET_TOLERANCE), never more.
        expect(plan.memory.perDevice.total).toBeLessThanOrEqual(
          plan.memory.capacityBytes * plan.memory.budgetFraction * (1 + BUDGET_TOLERANCE),
        )
        expect(plan.settings.effectiveBatch).toBe(
          plan.settings.microBatch * plan.settings.gradAccum * Math.max(1, plan.settings.gpus),
        )
        plans.push(plan)
      }
      const budgets = plans.map((plan) => plan.memory.budgetFraction)
      expect(budgets).toEqual([...budgets].sort((x, y) => x - y))
      // Memory grows with the mode, except where CPU plans are bound by their time budget: a bolder mode may then
      // train a larger model at a smaller batch in less memory.
      const timeBound = plans.every((p) => p.settings.device === 'cpu' && p.tokens.binding === 'time-budget')
      if (timeBound) return
      const [c, b, e] = plans.map((plan) => plan.memory.perDevice.total) as [number, number, number]
      expect(c).toBeLessThanOrEqual(b)
      expect(b).toBeLessThanOrEqual(e)
    })
  }
})

describe('generatePlan choices', () => {
  it('trains on the CPU when the only GPU is integrated graphics, with an honest time', async () => {
    const plan = await planFor(machine('laptop-intel-igpu'), pretrain(), 'conservative')
    expect(plan.settings.device).toBe('cpu')
    expect(plan.settings.backend).toBe('gloo')
    expect(plan.hardware.gpuName).toBeNull()
    expect(plan.time.totalHours).toBeGreaterThan(0)
  })

  it('holds the target effective batch constant across one and four GPUs', async () => {
    const one = await planFor(
      machine('server-a100-40gb'),
      pretrain({ targetEffectiveBatch: 256 }),
      'balanced',
    )
    const four = await planFor(
      machine('server-4x-a100-40gb'),
      pretrain({ targetEffectiveBatch: 256 }),
      'balanced',
    )
    expect(one.settings.effectiveBatch).toBe(256)
    expect(four.settings.effectiveBatch).toBe(256)
    expect(four.settings.gpus).toBe(4)
    expect(four.settings.gradAccum * four.settings.microBatch * 4).toBe(256)
  })

  it('lets a time budget bind the token budget', async () => {
    const plan = await planFor(machine('desktop-rtx4090'), pretrain({ timeBudgetHours: 0.25 }), 'balanced')
    expect(plan.tokens.binding).toBe('time-budget')
    expect(plan.time.totalHours).toBeLessThanOrEqual(0.25 + 1e-9)
    expect(plan.tokens.budget).toBeLessThan(plan.tokens.chinchillaTokens)
  })

  it('writes token counts at their scale in warnings: millions, not 0.00B', async () => {
    const plan = await planFor(machine('vm-2core-xeon'), pretrain({ timeBudgetHours: 2 }), 'conservative')
    const warning = plan.warnings.find((w) => w.id === 'time-budget-binds')
    expect(warning?.message).toMatch(/the 2 h budget allows \d+(\.\d)?[MK] /)
    expect(warning?.message).not.toMatch(/0\.00B/)
  })

  it('caps pretraining at four passes over a given dataset, and says how often it repeats', async () => {
    const plan = await planFor(
      machine('desktop-rtx4090'),
      pretrain({ datasetBytes: 200e6, timeBudgetHours: 1000 }),
      'balanced',
    )
    expect(plan.tokens.binding).toBe('dataset')
    expect(plan.tokens.budget).toBeLessThanOrEqual(4 * (200e6 / 4))
    expect(plan.warnings.find((w) => w.id === 'dataset-repeated')?.message).toMatch(
      /reads it 4\.0 times, capped at 4 epochs/,
    )
  })

  it('budgets whole optimizer steps, and says so when one step is more than the budget', async () => {
    const plan = await planFor(
      machine('desktop-rtx4090'),
      pretrain({ targetEffectiveBatch: 1_000_000, timeBudgetHours: 2 }),
      'balanced',
    )
    const tokensPerStep = plan.settings.effectiveBatch * plan.settings.seq
    expect(plan.time.steps).toBe(1)
    expect(plan.tokens.budget).toBe(tokensPerStep)
    expect(plan.warnings.find((w) => w.id === 'one-step-over-budget')?.message).toMatch(
      /One optimizer step trains 2\.05B tokens \(1000000 sequences of 2048\)/,
    )
  })

  it('does not say a fine-tune without a dataset size is bound by the dataset', async () => {
    const model = await resolveModel('gpt2')
    const plan = await planFor(machine('desktop-rtx4090'), pretrain({ kind: 'finetune', model }), 'balanced')
    expect(plan.tokens.binding).toBe('time-budget')
    expect(plan.suggestions.map((s) => s.id)).toContain('give-dataset-size')
  })

  it('names a short time budget the way it was given, in minutes, and a long one in hours', async () => {
    const model = await resolveModel('gpt2')
    const advice = async (timeBudgetHours: number) =>
      (
        await planFor(
          machine('desktop-rtx4090'),
          pretrain({ kind: 'finetune', model, timeBudgetHours }),
          'balanced',
        )
      ).suggestions.find((s) => s.id === 'give-dataset-size')?.message
    expect(await advice(5 / 60)).toMatch(/token budget is what 5 min of training reaches/)
    expect(await advice(1.5)).toMatch(/token budget is what 1\.5 h of training reaches/)
    expect(await advice(6)).toMatch(/token budget is what 6 h of training reaches/)
  })

  it('holds a plan on battery to conservative limits, with a warning', async () => {
    const profile = machine('macbook-m2-16gb')
    const onBattery = { ...profile, power: { ...profile.power, onBattery: true, acOnline: false } }
    const plan = await planFor(onBattery, pretrain(), 'extreme')
    expect(plan.memory.budgetFraction).toBe(0.5)
    expect(plan.warnings.map((w) => w.id)).toContain('on-battery-limits')
  })

  it('fine-tunes a 7B model on a 24 GB GPU with adapters, and fully on 8 H100s', async () => {
    const model = await resolveModel('llama-2-7b')
    const workload = pretrain({ kind: 'finetune', model })
    const small = await planFor(machine('desktop-rtx4090'), workload, 'balanced')
    expect(['lora', 'qlora']).toContain(small.settings.method)
    expect(small.params.trainable).toBeLessThan(small.params.total / 50)
    const big = await planFor(machine('dgx-8x-h100'), workload, 'balanced')
    expect(big.settings.method).toBe('full')
    expect(big.settings.gpus).toBe(8)
  })

  it('respects a forbid from the rules and records a rule-set value with its provenance', async () => {
    const profile = machine('desktop-rtx4090')
    const plan = await planFor(profile, pretrain(), 'balanced', (d) => ({
      ...d,
      forbids: [
        ...d.forbids,
        { setting: 'precision', value: 'bf16-mixed', provenance: provenance('no-bf16') },
      ],
      settings: {
        ...d.settings,
        compile: {
          setting: 'compile',
          value: false,
          source: 'set',
          provenance: provenance('compile-off'),
          overridden: [],
          cappedFrom: null,
        },
      },
    }))
    expect(plan.settings.precision).not.toBe('bf16-mixed')
    expect(plan.settings.compile.enabled).toBe(false)
    const compileTrace = plan.trace.find((entry) => entry.setting === 'compile')
    expect(compileTrace).toMatchObject({ rule: 'compile-off', pack: 'test-pack', layer: 'user' })
  })

  it('relaxes a rule-preferred search setting when nothing fits with it, and says so', async () => {
    const model = await resolveModel('llama-3.1-8b')
    const workload = pretrain({ kind: 'finetune', model, method: 'qlora', seq: 1024 })
    // Extreme: the QLoRA error band leaves no balanced configuration of this model at 1024 tokens on 12 GB.
    const plan = await planFor(machine('desktop-rtx3060-12gb'), workload, 'extreme', (d) => ({
      ...d,
      settings: {
        ...d.settings,
        gradCheckpointing: {
          setting: 'gradCheckpointing',
          value: false,
          source: 'set',
          provenance: provenance('no-recompute'),
          overridden: [],
          cappedFrom: null,
        },
      },
    }))
    expect(plan.settings.seq).toBe(1024)
    expect(plan.settings.gradCheckpointing).toBe(true)
    expect(plan.warnings.map((w) => w.id)).toContain('rule-preference-relaxed')
    expect(plan.trace.find((t) => t.setting === 'gradCheckpointing')?.reason).toMatch(
      /test-pack\/no-recompute prefers false/,
    )
  })

  it('refuses with a fit error when nothing fits, suggesting what to change', async () => {
    const model = await resolveModel('llama-2-70b')
    const error = await planFor(
      machine('cloud-t4'),
      pretrain({ kind: 'finetune', model, method: 'full' }),
      'conservative',
    ).catch((e) => e)
    expect(error).toBeInstanceOf(RigfitError)
    expect(error.kind).toBe('fit')
    expect(error.suggestion).toMatch(/qlora|GPU/i)
  })

  it('is deterministic', async () => {
    const a = await planFor(machine('workstation-2x-rtx3090'), pretrain(), 'extreme')
    const b = await planFor(machine('workstation-2x-rtx3090'), pretrain(), 'extreme')
    expect(a).toEqual(b)
  })
})

describe('generatePlan with frozen companion models (elastic setup)', () => {
  it('replicates everything on 80 GB GPUs and splits models across 24 GB GPUs', async () => {
    const llama = await resolveModel('llama-3.1-8b')
    const qwen = await resolveModel('qwen2.5-7b')
    const workload = pretrain({
      kind: 'finetune',
      model: await resolveModel('gpt2'),
      method: 'full',
      frozenModels: [llama, qwen],
    })
    const h100 = await planFor(machine('dgx-8x-h100'), workload, 'balanced')
    // Every GPU trains a data-parallel replica (DDP or ZeRO, whichever is faster) beside both frozen models.
    expect(['ddp', 'zero']).toContain(h100.settings.strategy)
    expect(h100.settings.gpus).toBe(8)
    expect(h100.placement?.every((device) => device.models.length === 3)).toBe(true)
    const split = await planFor(machine('workstation-2x-rtx3090'), workload, 'balanced')
    expect(split.settings.strategy).toBe('model-split')
    // The trained model has GPU 0 to itself among the replicas: no data parallelism.
    expect(split.settings.gpus).toBe(1)
    expect(split.hardware.gpus).toBe(2)
    expect(split.settings.effectiveBatch).toBe(split.settings.microBatch * split.settings.gradAccum)
    const holders = (id: string) =>
      (split.placement ?? []).filter((device) => device.models.includes(id)).length
    expect(holders(llama.id)).toBe(1)
    expect(holders(qwen.id)).toBe(1)
    expect(split.placement?.[0]?.models[0]).toBe(split.model.id)
  })
})

function provenance(rule: string) {
  return { rule, pack: 'test-pack', layer: 'user' as const, priority: 50, facts: {}, reason: 'test' }
}
