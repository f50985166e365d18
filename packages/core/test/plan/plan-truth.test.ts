import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { estimate } from '../../src/estimate/index.js'
import { findCatalogModel } from '../../src/model/index.js'
import { loadCorePack } from '../../src/node/core-pack.js'
import { effectiveBatchOf } from '../../src/plan/batch.js'
import { generatePlan, type PlanOptions } from '../../src/plan/generate.js'
import { MODES } from '../../src/plan/modes.js'
import { estimatePower } from '../../src/plan/power.js'
import { BUDGET_TOLERANCE } from '../../src/plan/search.js'
import { strategyFor, strategyProblem } from '../../src/plan/strategy.js'
import { selectTrainingDevices } from '../../src/plan/training-devices.js'
import { planTrainingPoint, pointEstimateInput } from '../../src/plan/training-point.js'
import { decide } from '../../src/rules/decide.js'
import { deriveFacts } from '../../src/rules/derive-facts.js'
import { traceFor } from '../../src/rules/explain.js'
import type { Mode } from '../../src/schemas/common.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import { SETTING_NAMES, SETTING_PLAN_PATHS } from '../../src/schemas/rule-pack.js'
import { TrainingPlan } from '../../src/schemas/training-plan.js'
import { WORKLOAD_SCHEMA_VERSION, type Workload } from '../../src/schemas/workload.js'
import { planStackMechanisms } from '../../src/stack/plan-stack.js'

const machinesDir = new URL('../fixtures/machines/', import.meta.url)
const machines = readdirSync(machinesDir).map((file) => ({
  name: file.replace(/\.json$/, ''),
  profile: HardwareProfile.parse(JSON.parse(readFileSync(new URL(file, machinesDir), 'utf8'))),
}))
const MODELS = ['gpt2', 'llama-3.2-1b', 'qwen2.5-7b', 'llama-3.1-8b', 'mixtral-8x7b', 'llama-2-70b'] as const
const METHODS = ['auto', 'full', 'lora', 'qlora'] as const
const pack = loadCorePack()

function workload(model: string | null, method: Workload['method'], nodes: number): Workload {
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: model ? 'finetune' : 'pretrain',
    model: model ? (findCatalogModel(model) ?? null) : null,
    method,
    frozenModels: [],
    datasetBytes: null,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: null,
    nodes,
  }
}

async function planOrNull(
  profile: HardwareProfile,
  work: Workload,
  mode: Mode,
  options: Partial<PlanOptions> = {},
) {
  const decisions = await decide([pack], deriveFacts(profile, work, mode))
  try {
    return generatePlan({
      profile,
      workload: work,
      mode,
      decisions,
      options: { createdAt: 'fixed', ...options },
    })
  } catch (error) {
    if ((error as { kind?: string }).kind === 'fit') return null
    throw error
  }
}

/** Every settings key as a trace name: the packs' name where one exists (`dataloaderWorkers`), else the path. */
const traceNameOf = (path: string) => SETTING_NAMES.find((name) => SETTING_PLAN_PATHS[name] === path) ?? path

function settingsByPath(plan: TrainingPlan): [string, unknown][] {
  const out: [string, unknown][] = []
  for (const [key, value] of Object.entries(plan.settings)) {
    if (key === 'compile' || key === 'dataloader') {
      for (const [sub, inner] of Object.entries(value as object)) out.push([`${key}.${sub}`, inner])
    } else out.push([key, value])
  }
  return out
}

/** The checks every plan must pass: one truth for settings, trace, estimate, strategy, budget and CPU share. */
function checkPlanTruth(plan: TrainingPlan, profile: HardwareProfile): string[] {
  const problems: string[] = []
  const s = plan.settings
  if (!TrainingPlan.safeParse(plan).success) problems.push('schema')
  for (const [path, value] of settingsByPath(plan)) {
    const entries = traceFor(plan.trace, traceNameOf(path))
    const last = entries[entries.length - 1]
    if (!last) problems.push(`${path}: no trace entry`)
    else if (JSON.stringify(last.value) !== JSON.stringify(value))
      problems.push(`${path}: trace says ${JSON.stringify(last.value)}, settings ${JSON.stringify(value)}`)
  }
  const fraction = traceFor(plan.trace, 'memoryFraction').at(-1)?.value
  if (fraction !== plan.memory.budgetFraction) problems.push(`memoryFraction trace ${fraction}`)
  // The estimator, given the plan's own settings, gives the plan's memory and speed.
  const devices = selectTrainingDevices(profile)
  const again = estimate(
    pointEstimateInput(
      planTrainingPoint(plan),
      devices.estimateDevice,
      profile.interconnect.kind,
      planStackMechanisms(plan),
    ),
  )
  if (JSON.stringify(again.perDevice) !== JSON.stringify(plan.memory.perDevice))
    problems.push('memory differs')
  if (again.throughput?.tokensPerSecond !== plan.throughput.tokensPerSecond) problems.push('tokens/s differs')
  const strategyIssue = strategyProblem(s)
  if (strategyIssue !== null) problems.push(`strategy: ${strategyIssue.message}`)
  if (
    s.device !== 'cpu' &&
    s.strategy !== 'model-split' &&
    s.strategy !== strategyFor({ ...s, modelSplit: false })
  )
    problems.push(`strategy ${s.strategy}`)
  if (s.effectiveBatch !== effectiveBatchOf(s)) problems.push('effective batch')
  // Whole optimizer steps, and a fine-tune without a dataset size is bound by time, not by a dataset.
  if (plan.tokens.budget !== plan.time.steps * s.effectiveBatch * s.seq)
    problems.push('budget not whole steps')
  if (plan.workload.kind === 'finetune' && plan.tokens.binding !== 'time-budget') problems.push('binding')
  // Threads and loader workers are per rank, from the machine's cores.
  const ranks = Math.max(1, s.gpus)
  if (s.threads > Math.max(1, Math.floor(profile.cpu.physicalCores / ranks)))
    problems.push(`threads ${s.threads}`)
  if (s.dataloader.workers > Math.max(1, Math.floor(profile.cpu.usableCores / ranks) - 1))
    problems.push(`workers ${s.dataloader.workers}`)
  // The traced power share reproduces the plan's power.
  const powerFraction = traceFor(plan.trace, 'powerFraction').at(-1)?.value as number
  const devicesUsed = devices.gpus.slice(0, plan.hardware.gpus)
  const power = estimatePower({
    deviceTdpWatts: devices.tdpWatts.slice(0, devicesUsed.length),
    devicePowerLimitWatts: devices.powerLimitWatts.slice(0, devicesUsed.length),
    tdpFraction: powerFraction,
    physicalCores: profile.cpu.physicalCores,
    cpuOnly: s.device === 'cpu',
    hours: plan.time.totalHours,
    psuWatts: null,
    unifiedMemory: devicesUsed.some((gpu) => gpu.unifiedMemory),
  })
  if (power.watts !== plan.power.watts) problems.push(`power ${power.watts} vs ${plan.power.watts}`)
  if (
    plan.memory.perDevice.total >
    plan.memory.capacityBytes * plan.memory.budgetFraction * (1 + BUDGET_TOLERANCE)
  )
    problems.push('budget')
  return problems
}

describe('every plan is one truth', () => {
  it('over fixture machines x models x methods x modes x nodes: trace, estimate, strategy, budget, CPU', async () => {
    let planned = 0
    const failures: string[] = []
    for (const { name, profile } of machines) {
      for (const mode of MODES) {
        for (const model of [null, ...MODELS]) {
          for (const method of model ? METHODS : (['auto'] as const)) {
            for (const nodes of [1, 2]) {
              const plan = await planOrNull(profile, workload(model, method, nodes), mode)
              if (!plan) continue
              planned += 1
              const problems = checkPlanTruth(plan, profile)
              if (problems.length > 0)
                failures.push(
                  `${name} ${mode} ${model ?? 'pretrain'} ${method} x${nodes}: ${problems.join('; ')}`,
                )
            }
          }
        }
      }
    }
    expect(failures).toEqual([])
    expect(planned).toBeGreaterThan(500)
  }, 120_000)
})

describe('extreme is never slower than balanced for the same work', () => {
  it('full fine-tunes at a pinned sequence: extreme tokens/s >= balanced, on every machine and model', async () => {
    const slower: string[] = []
    let compared = 0
    for (const { name, profile } of machines) {
      for (const model of MODELS) {
        const work = { ...workload(model, 'full', 1), seq: 1024 }
        const balanced = await planOrNull(profile, work, 'balanced')
        const extreme = await planOrNull(profile, work, 'extreme')
        if (!balanced || !extreme) continue
        compared += 1
        if (extreme.throughput.tokensPerSecond < balanced.throughput.tokensPerSecond * 0.98)
          slower.push(
            `${name} ${model}: ${extreme.throughput.tokensPerSecond} < ${balanced.throughput.tokensPerSecond}`,
          )
      }
    }
    expect(slower).toEqual([])
    expect(compared).toBeGreaterThan(10)
  })

  it('when extreme trains a heavier shape than balanced and is slower for it, a warning says why', async () => {
    for (const { name, profile } of machines) {
      for (const model of MODELS) {
        const work = workload(model, 'auto', 1)
        const balanced = await planOrNull(profile, work, 'balanced')
        const extreme = await planOrNull(profile, work, 'extreme')
        if (!balanced || !extreme) continue
        if (extreme.throughput.tokensPerSecond < balanced.throughput.tokensPerSecond * 0.95) {
          expect(
            extreme.warnings.map((w) => w.id),
            `${name} ${model}`,
          ).toContain('extreme-more-work-per-token')
        }
      }
    }
  })
})
