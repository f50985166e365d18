import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import {
  checkPlan,
  decide,
  deriveFacts,
  findCatalogModel,
  generatePlan,
  HardwareProfile,
  isRigfitError,
  type Mode,
  type Precision,
  type SettingPins,
  type TrainingPlan,
  WORKLOAD_SCHEMA_VERSION,
  type Workload,
} from '@rigfit/core'
import { loadCorePack } from '@rigfit/core/node'

const require = createRequire(import.meta.url)

/** What to plan: one of core's recorded machines, a workload and a mode, as `rigfit plan` takes them. */
export interface PlanRecipe {
  machine: string
  mode: Mode
  /** A catalog model to fine-tune; absent for pretraining a model the planner shapes. */
  model?: string
  method?: Workload['method']
  nodes?: number
  /** `--precision`: a pinned precision (pure half is planned only when pinned). */
  precision?: Precision
  /** `--sharding`: a pinned sharding, for fixtures that stand for one strategy's exports. */
  sharding?: SettingPins['sharding']
}

const profiles = new Map<string, HardwareProfile>()

/** One of core's recorded machine profiles (test/fixtures/machines). */
export function machineProfile(machine: string): HardwareProfile {
  const cached = profiles.get(machine)
  if (cached) return cached
  // Fixtures are not published, so no export of @rigfit/core names them: they sit beside its package.json.
  const coreRoot = dirname(require.resolve('@rigfit/core/package.json'))
  const file = join(coreRoot, 'test', 'fixtures', 'machines', `${machine}.json`)
  const profile = HardwareProfile.parse(JSON.parse(readFileSync(file, 'utf8')))
  profiles.set(machine, profile)
  return profile
}

/** The plan `rigfit plan` makes for a recipe (core's rule pack and generator); throws when nothing fits. */
export async function plannerPlan(recipe: PlanRecipe): Promise<TrainingPlan> {
  const profile = machineProfile(recipe.machine)
  const model = recipe.model ? findCatalogModel(recipe.model) : null
  if (recipe.model && !model) throw new Error(`no catalog model ${recipe.model}`)
  const workload: Workload = {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: model ? 'finetune' : 'pretrain',
    model: model ?? null,
    method: recipe.method ?? (model ? 'auto' : 'full'),
    frozenModels: [],
    datasetBytes: null,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: null,
    nodes: recipe.nodes ?? 1,
    pins: {
      ...(recipe.precision ? { precision: recipe.precision } : {}),
      ...(recipe.sharding ? { sharding: recipe.sharding } : {}),
    },
  }
  const decisions = await decide([loadCorePack()], deriveFacts(profile, workload, recipe.mode))
  return generatePlan({
    profile,
    workload,
    mode: recipe.mode,
    decisions,
    options: { createdAt: 'fixed' },
  })
}

/** The machines, workloads and modes the property tests sweep. */
export const SWEEP_MACHINES = [
  'desktop-rtx4090',
  'desktop-rtx3060-12gb',
  'workstation-2x-rtx3090',
  'server-a100-40gb',
  'server-4x-a100-40gb',
  'dgx-8x-h100',
  'cloud-t4',
  'desktop-rx7900xtx',
  'workstation-w7900',
  'macbook-m2-16gb',
  'vm-2core-xeon',
  'laptop-intel-igpu',
] as const
export const SWEEP_WORKLOADS: Array<Pick<PlanRecipe, 'model' | 'method' | 'precision'>> = [
  {},
  { model: 'gpt2', method: 'full' },
  { model: 'smollm-360m', method: 'lora' },
  { model: 'qwen2.5-1.5b', method: 'full' },
  { model: 'llama-3.2-1b', method: 'qlora' },
  { model: 'phi-3-mini', method: 'lora' },
  { model: 'llama-3.1-8b', method: 'lora' },
  { model: 'llama-3.1-8b', method: 'qlora' },
  { model: 'mixtral-8x7b', method: 'qlora' },
  { model: 'llama-3.1-70b', method: 'full' },
  // Pure half, which the planner makes only when asked: each tool must train it as planned or the plan says why.
  { model: 'gpt2', method: 'full', precision: 'fp16-true' },
  { model: 'llama-3.2-1b', method: 'full', precision: 'bf16-true' },
  { model: 'qwen2.5-1.5b', method: 'lora', precision: 'bf16-true' },
]
const MODES: Mode[] = ['conservative', 'balanced', 'extreme']

export interface SweptPlan {
  label: string
  plan: TrainingPlan
  /** The recorded machine the plan is for (machineProfile). */
  machine: string
}

let swept: SweptPlan[] | null = null

/**
 * Every plan the planner makes over machines x workloads x modes x {1, 2} nodes; combinations where nothing fits
 * (a 70B model on a laptop) are left out, as `rigfit plan` reports them instead of writing a plan.
 */
export async function sweepPlans(): Promise<SweptPlan[]> {
  if (swept) return swept
  const plans: SweptPlan[] = []
  for (const machine of SWEEP_MACHINES) {
    for (const workload of SWEEP_WORKLOADS) {
      for (const mode of MODES) {
        for (const nodes of [1, 2]) {
          const recipe = { machine, mode, nodes, ...workload }
          try {
            const plan = await plannerPlan(recipe)
            const what = `${workload.model ? `${workload.model} ${workload.method}` : 'pretrain'}${workload.precision ? ` --precision ${workload.precision}` : ''}`
            // A pinned precision the device lacks is kept with a warning and refused by export (exit 4): not swept.
            if (recipe.precision && checkPlan(plan).length > 0) continue
            plans.push({ label: `${machine} ${what} ${mode} x${nodes}`, plan, machine })
          } catch (error) {
            if (!isRigfitError(error) || error.kind !== 'fit') throw error
          }
        }
      }
    }
  }
  swept = plans
  return plans
}
