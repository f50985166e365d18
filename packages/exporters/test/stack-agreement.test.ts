import {
  CURRENT_STACK_VERSION,
  decide,
  deriveFacts,
  estimate,
  generatePlan,
  isRigfitError,
  processesPerNode,
  resolveStack,
  selectTrainingDevices,
  type TrainingPlan,
  userEstimateInput,
  type Workload,
} from '@rigfit/core'
import { loadCorePack } from '@rigfit/core/node'
import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { FORMAT_NAMES, type FormatName } from '../src/format-names.js'
import { FORMAT_STACK, STACK_SETTINGS_FILE } from '../src/stack-settings.js'
import { METHODS, MODELS, workloadOf } from './helpers/plan-space.js'
import { machineProfile } from './helpers/planner-plan.js'

const MACHINES = ['dgx-8x-h100', 'desktop-rtx4090'] as const

/** The plan `rigfit export --mode balanced --format F` makes: planned for the format's own stack. */
async function formatPlan(
  machine: string,
  model: (typeof MODELS)[number],
  method: Workload['method'],
  format: FormatName,
): Promise<TrainingPlan | null> {
  const profile = machineProfile(machine)
  const workload = workloadOf({ model, method }, 1)
  const stackName = FORMAT_STACK[format]
  const decisions = await decide([loadCorePack()], deriveFacts(profile, workload, 'balanced'))
  try {
    return generatePlan({
      profile,
      workload,
      mode: 'balanced',
      decisions,
      options: { createdAt: 'fixed', stack: { name: stackName, version: CURRENT_STACK_VERSION[stackName] } },
    })
  } catch (error) {
    if (isRigfitError(error) && error.kind === 'fit') return null
    throw error
  }
}

/** Everything the exported files, read back, say differently from the plan and from `rigfit estimate --stack`. */
function disagreements(plan: TrainingPlan, format: FormatName, machine: string): string[] {
  const problems: string[] = []
  const stackName = FORMAT_STACK[format]
  if (plan.stack !== `${stackName}@${CURRENT_STACK_VERSION[stackName]}`)
    problems.push(`plan stack ${plan.stack} for ${format}`)
  const mechanisms = resolveStack({ name: stackName, version: CURRENT_STACK_VERSION[stackName] }).mechanisms
  const { files } = exportPlan(plan, { format })
  const stackFile = files.find((f) => f.path === STACK_SETTINGS_FILE)
  if (!stackFile) return [...problems, `${format}: no ${STACK_SETTINGS_FILE}`]
  const written = JSON.parse(stackFile.content)
  const expected = {
    stack: plan.stack,
    compile: plan.settings.compile.enabled,
    tf32: plan.settings.tf32,
    upcastLogits: mechanisms.upcastLogits,
    adapterDtype: plan.settings.lora ? mechanisms.adapterDtype : null,
  }
  for (const [key, value] of Object.entries(expected))
    if (written[key] !== value)
      problems.push(`${format} ${STACK_SETTINGS_FILE} ${key}: ${written[key]} vs ${value}`)
  // Formats that carry compile and TF32 in their own fields say the same.
  const args = files.find((f) => f.path === 'training_args.json')
  if (args) {
    const parsed = JSON.parse(args.content)
    if (parsed.torch_compile !== plan.settings.compile.enabled) problems.push(`${format} torch_compile`)
    if (parsed.tf32 !== undefined && parsed.tf32 !== plan.settings.tf32) problems.push(`${format} tf32`)
  }
  // `rigfit estimate --stack` with the plan's settings on its device gives the plan's memory.
  const profile = machineProfile(machine)
  const s = plan.settings
  const input = userEstimateInput({
    model: plan.model,
    device: selectTrainingDevices(profile).estimateDevice,
    settings: {
      seq: s.seq,
      microBatch: s.microBatch,
      gradAccum: s.gradAccum,
      precision: s.precision,
      optimizer: s.optimizer,
      gradCheckpointing: s.gradCheckpointing,
      attention: s.attention,
      gpus: processesPerNode(s),
      nodes: s.nodes,
      interconnect: profile.interconnect.kind,
      sharding: s.sharding,
      offload: s.offload,
      lora: s.lora ? { rank: s.lora.rank, targets: s.lora.targets as never, dropout: 0 } : null,
      quant: s.quant,
      fusedOptimizer: s.fusedOptimizer,
      compile: s.compile.enabled,
      tf32: s.tf32,
    },
    stack: mechanisms,
  })
  const again = estimate(input).perDevice.total
  if (again !== plan.memory.perDevice.total)
    problems.push(`${format}: estimate --stack ${again} vs plan ${plan.memory.perDevice.total}`)
  return problems
}

describe('estimate, plan and export agree on the stack', () => {
  for (const machine of MACHINES) {
    it(`on ${machine}, for every format, catalog model and method`, async () => {
      const problems: string[] = []
      let checked = 0
      for (const format of FORMAT_NAMES) {
        for (const model of MODELS) {
          for (const method of METHODS) {
            const plan = await formatPlan(machine, model, method, format)
            if (!plan) continue
            checked += 1
            try {
              problems.push(...disagreements(plan, format, machine).map((p) => `${model} ${method}: ${p}`))
            } catch (error) {
              // A format that cannot express the plan refuses it; that is not a disagreement.
              if (!isRigfitError(error) || error.kind !== 'validation') throw error
            }
          }
        }
      }
      expect(checked).toBeGreaterThan(FORMAT_NAMES.length * 5)
      expect(problems).toEqual([])
    }, 600_000)
  }
})
