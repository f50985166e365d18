import { computeCapabilityNumber, hasNativeBf16, hasTf32 } from '../../device/capabilities.js'
import { RigfitError } from '../../errors.js'
import type { TrainingPlan } from '../../schemas/training-plan.js'
import { effectiveBatchOf, processesPerNode } from '../batch.js'
import { strategyProblem } from '../strategy.js'
import { halfType, planDevice } from './plan-precision.js'

/** One contradiction inside a plan, named by the field it concerns. */
export interface PlanIssue {
  field: string
  message: string
}

/**
 * Contradictions a schema cannot see: settings that no trainer would accept together. A plan with any of them
 * is refused rather than exported into configs that fail at launch (or worse, silently train differently).
 */
export function checkPlan(plan: TrainingPlan): PlanIssue[] {
  const issues: PlanIssue[] = []
  const s = plan.settings
  const add = (field: string, message: string) => issues.push({ field, message })

  const expected = effectiveBatchOf(s)
  if (s.effectiveBatch !== expected) {
    add(
      'settings.effectiveBatch',
      `is ${s.effectiveBatch} but microBatch ${s.microBatch} x gradAccum ${s.gradAccum} x processes per node ${processesPerNode(s)} x nodes ${s.nodes} = ${expected}`,
    )
  }
  if (s.nodes !== plan.hardware.nodes) {
    add('settings.nodes', `is ${s.nodes} but hardware.nodes is ${plan.hardware.nodes}`)
  }
  if (s.gpus > plan.hardware.gpus) {
    add('settings.gpus', `uses ${s.gpus} GPUs but the hardware has ${plan.hardware.gpus} per node`)
  }
  const cpuDevice = s.device === 'cpu'
  if (cpuDevice !== (s.gpus === 0)) {
    add('settings.gpus', cpuDevice ? 'must be 0 on a CPU plan' : `must be at least 1 on a ${s.device} plan`)
  }
  if (s.device === 'mps' && (s.gpus > 1 || s.nodes > 1)) {
    add('settings.device', 'mps trains on one device only: no multi-GPU or multi-node backend exists for it')
  }
  // Exactly the strategy / sharding / offload / GPU-count combinations the planner emits (core's strategyFor).
  const strategyIssue = strategyProblem(s)
  if (strategyIssue !== null) add(`settings.${strategyIssue.field}`, strategyIssue.message)
  if (s.strategy === 'cpu' && !cpuDevice) add('settings.strategy', `cpu strategy on a ${s.device} device`)
  if (s.offload !== 'none' && s.sharding === 'none') {
    add('settings.offload', `offloading (${s.offload}) needs ZeRO or FSDP sharding, but sharding is none`)
  }
  if (s.offload === 'all' && (s.sharding === 'zero1' || s.sharding === 'zero2')) {
    add('settings.offload', `parameter offload needs ZeRO stage 3 or FSDP, not ${s.sharding}`)
  }
  const half = halfType(s.precision)
  const cc = computeCapabilityNumber(plan.hardware.computeCapability)
  if (half === 'bf16' && s.device === 'cuda' && Number.isFinite(cc) && !hasNativeBf16(planDevice(plan))) {
    add('settings.precision', `bf16 needs compute capability 8.0 or newer; this GPU has ${cc}`)
  }
  if (half === 'fp16' && cpuDevice)
    add('settings.precision', 'fp16 training is not supported on the CPU; use bf16 or fp32')
  if (s.tf32 && !hasTf32(planDevice(plan))) {
    add(
      'settings.tf32',
      `TF32 exists on NVIDIA Ampere or newer (compute capability 8.0+) and AMD CDNA3 (gfx94x); this plan has ${s.device} ${plan.hardware.computeCapability ?? 'of unknown architecture'}`,
    )
  }
  if ((s.method === 'full') !== (s.lora === null)) {
    add(
      'settings.lora',
      s.method === 'full' ? 'is set but the method is full' : `is missing for method ${s.method}`,
    )
  }
  if (s.method === 'qlora' && s.quant === 'none')
    add('settings.quant', 'qlora needs a 4-bit or 8-bit base model')
  if (
    s.dataloader.workers === 0 &&
    (s.dataloader.prefetchFactor !== null || s.dataloader.persistentWorkers)
  ) {
    add('settings.dataloader', 'prefetchFactor and persistentWorkers need at least one worker')
  }
  if (s.seq > plan.model.maxPositions) {
    add('settings.seq', `${s.seq} is longer than the model's ${plan.model.maxPositions} positions`)
  }
  return issues
}

/** Throws a validation error listing every contradiction, naming where the plan came from. */
export function assertPlanConsistent(plan: TrainingPlan, source: string): void {
  const issues = checkPlan(plan)
  if (issues.length === 0) return
  throw new RigfitError(
    'validation',
    'E_PLAN_INCONSISTENT',
    `${source}: the plan contradicts itself: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`,
    {
      suggestion: 'Regenerate the plan with `rigfit plan`, or correct the named fields by hand.',
      details: issues,
    },
  )
}
