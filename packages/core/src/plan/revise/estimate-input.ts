import { RigfitError } from '../../errors.js'
import { type EstimateDevice, EstimateInput, LoraSpec } from '../../schemas/estimate.js'
import type { TrainingPlan } from '../../schemas/training-plan.js'
import { planStackMechanisms } from '../../stack/plan-stack.js'
import { planTrainingPoint, pointEstimateInput } from '../training-point.js'

/** The settings a derived plan changes: sequence, batch shape and node count; everything else is the plan's. */
export interface PlanPoint {
  seq: number
  microBatch: number
  gradAccum: number
  nodes: number
}

/** Where the plan itself stands. */
export function planPoint(plan: TrainingPlan): PlanPoint {
  const s = plan.settings
  return { seq: s.seq, microBatch: s.microBatch, gradAccum: s.gradAccum, nodes: s.nodes }
}

/** Refuses LoRA targets the estimator does not know; the plan schema stores them as free strings. */
function checkLoraTargets(plan: TrainingPlan): void {
  const lora = plan.settings.lora
  if (lora === null || LoraSpec.safeParse({ rank: lora.rank, targets: lora.targets }).success) return
  throw new RigfitError(
    'validation',
    'E_PLAN_LORA',
    `settings.lora.targets ${JSON.stringify(lora.targets)} names layers the estimator does not know`,
    { suggestion: 'Use q, k, v, o, gate, up and down, or regenerate the plan with `rigfit plan`.' },
  )
}

/**
 * The estimator input for the plan's settings at `point`: core's one mapping from a training point to the
 * estimator (the planner's), at the point's sequence, batch shape and node count, with the plan's own CUDA
 * context size. The interconnect is left out (no communication cost): re-estimates are ratios against the plan's
 * own point, and the inter-node scaling is applied on top of them (see reestimate.ts).
 */
export function estimateInputAt(
  plan: TrainingPlan,
  point: PlanPoint,
  device: EstimateDevice | null,
): EstimateInput {
  checkLoraTargets(plan)
  const trainingPoint = { ...planTrainingPoint(plan), ...point }
  return EstimateInput.parse({
    ...pointEstimateInput(trainingPoint, device as EstimateDevice, 'none', planStackMechanisms(plan)),
    interconnect: null,
    device,
    cudaContextBytes: plan.memory.perDevice.cudaContext,
  })
}
