import { estimate } from '../../estimate/estimate.js'
import { scalingEfficiency } from '../../estimate/scaling.js'
import type { EstimateDevice, EstimateResult } from '../../schemas/estimate.js'
import type { TrainingPlan } from '../../schemas/training-plan.js'
import { effectiveBatchOf, worldSize } from '../batch.js'
import { BUDGET_TOLERANCE } from '../search.js'
import { planEstimateDevice } from './estimate-device.js'
import { estimateInputAt, type PlanPoint, planPoint } from './estimate-input.js'

/** A plan's memory and speed at another point, from the estimator. */
export interface Reestimate {
  memory: TrainingPlan['memory']
  throughput: TrainingPlan['throughput']
  /** Bytes one device needs: the trained model's total plus frozen companion models placed beside it. */
  deviceBytes: number
  /** The plan's memory budget: capacity x budget fraction. */
  budgetBytes: number
  fits: boolean
}

/**
 * Core's scaling efficiency with one GPU per node is its inter-node factor alone. The intra-node factor (which
 * depends on an interconnect the plan does not record) is the same on every node count, so ratios of this are
 * ratios of the full efficiency.
 */
export function interNodeEfficiency(nodes: number): number {
  return scalingEfficiency(1, nodes, 'none', 'none')
}

/**
 * Frozen companion models the planner placed on the training GPU: the plan's used share of memory counts them,
 * its per-device breakdown (the trained model's estimate) does not.
 */
function companionBytes(plan: TrainingPlan): number {
  const used = plan.memory.usedFraction * plan.memory.capacityBytes
  return Math.max(0, Math.round(used - plan.memory.perDevice.total))
}

/**
 * Re-estimates the plan at other points, on the device recovered from the plan (planEstimateDevice). Memory is
 * the estimator's figure for the new settings (host memory does not depend on them and is kept). Speed is the
 * plan's own, moved by the estimator's per-device ratio between the two points and by the inter-node scaling
 * ratio, so the plan's own point maps onto the plan's own figures.
 */
export function reestimator(
  plan: TrainingPlan,
  /** The plan with other settings (a precision the tool trains in), estimated at each point instead of the plan. */
  variant: TrainingPlan = plan,
): (point: PlanPoint) => Reestimate {
  const device = planEstimateDevice(plan)
  const base = estimate(estimateInputAt(plan, planPoint(plan), device)).throughput
  return (point) => reestimateOn(plan, variant, device, base, point)
}

function reestimateOn(
  plan: TrainingPlan,
  variant: TrainingPlan,
  device: EstimateDevice,
  base: EstimateResult['throughput'],
  point: PlanPoint,
): Reestimate {
  const next = estimate(estimateInputAt(variant, point, device))
  const speed = next.throughput
  if (!base || !speed) throw new Error('the estimator returns a throughput for every device')
  const scaling = interNodeEfficiency(point.nodes) / interNodeEfficiency(plan.settings.nodes)
  const tokensPerSecondPerDevice =
    plan.throughput.tokensPerSecondPerDevice *
    (speed.tokensPerSecondPerDevice / base.tokensPerSecondPerDevice) *
    scaling
  const shape = { ...point, gpus: plan.settings.gpus }
  const tokensPerSecond = tokensPerSecondPerDevice * worldSize(shape)
  const effectiveBatch = effectiveBatchOf(shape)
  const capacity = plan.memory.capacityBytes
  const deviceBytes = next.perDevice.total + companionBytes(plan)
  const budgetBytes = capacity * plan.memory.budgetFraction
  return {
    memory: {
      ...plan.memory,
      perDevice: next.perDevice,
      usedFraction: capacity > 0 ? deviceBytes / capacity : 0,
    },
    throughput: {
      tokensPerSecond,
      tokensPerSecondPerDevice,
      stepSeconds: tokensPerSecond > 0 ? (effectiveBatch * point.seq) / tokensPerSecond : 0,
      mfu: plan.throughput.mfu * (speed.mfu / base.mfu) * scaling,
    },
    deviceBytes,
    budgetBytes,
    // The planner holds the mode's line as a target with a tolerance; a revision is held to the same.
    fits: deviceBytes <= budgetBytes * (1 + BUDGET_TOLERANCE),
  }
}
