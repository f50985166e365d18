import type { StackMechanisms } from '../schemas/stack.js'
import type { TrainingPlan } from '../schemas/training-plan.js'
import { resolveStack } from './resolve-stack.js'
import { parseStackRef } from './stack-ref.js'

/**
 * What the plan's stack does beyond its settings, for re-estimating the plan as it was estimated; undefined for a
 * plan written before plans recorded their stack, which was estimated without one.
 */
export function planStackMechanisms(plan: Pick<TrainingPlan, 'stack'>): StackMechanisms | undefined {
  return plan.stack === undefined
    ? undefined
    : resolveStack(parseStackRef(plan.stack, 'plan: stack', 'validation')).mechanisms
}
