import type { Advice, TrainingPlan } from '../../schemas/training-plan.js'
import { type CacheDecision, sizeCache } from './cache-sizing.js'
import { assertPlanConsistent } from './check-plan.js'
import { asDeepSpeedRuns } from './deepspeed-runs.js'
import { type IoFacts, NO_IO_FACTS } from './io-facts.js'
import { deriveMetaPlans, type MetaPlans } from './meta-phases.js'
import { planForNodes } from './nodes.js'
import { decideStreaming, type StreamingDecision } from './streaming.js'

export interface PlanToWriteOptions {
  /** Run the plan on this many identical nodes (accumulation rescaled to hold the effective batch). */
  nodes?: number | null
  /** Phase A/B meta-config: two full plans derived from the plan. */
  meta?: boolean
  datasetBytes?: number | null
  /** Measured storage, network and RAM; without them the decisions say what is unknown. */
  io?: IoFacts
  /** Whether the target runs this (rescaled) plan under DeepSpeed, which trains pure half as mixed. */
  runsUnderDeepSpeed: (plan: TrainingPlan) => boolean
  /** The writer's own refusals of the plan it would write, before any phase is derived from it. */
  accept?: (plan: TrainingPlan) => void
}

/** The finished plan to write, with what revising it decided. */
export interface PlanToWrite {
  plan: TrainingPlan
  /** The phases of a meta-config; null without `meta`. */
  phases: MetaPlans | null
  /** Warnings the revision added to the input's: the revised plan's new ones, then the phases'. */
  warnings: Advice[]
  streaming: StreamingDecision
  cache: CacheDecision
}

/**
 * Every plan → plan derivation an export needs, in order: the plan checked, rescaled to other nodes, run as
 * DeepSpeed runs it where the target uses DeepSpeed, split into meta phases, and the dataset's streaming and
 * cache decided. Writers only format the result. Throws a RigfitError when the plan contradicts itself or
 * cannot be revised as asked.
 */
export function planToWrite(input: TrainingPlan, options: PlanToWriteOptions): PlanToWrite {
  assertPlanConsistent(input, 'the plan')
  const scaled = options.nodes == null ? input : planForNodes(input, options.nodes)
  const plan = options.runsUnderDeepSpeed(scaled) ? asDeepSpeedRuns(scaled) : scaled
  options.accept?.(plan)
  const warnings = plan.warnings.filter((w) => !input.warnings.some((o) => o.id === w.id))
  const phases = options.meta ? deriveMetaPlans(plan) : null
  if (phases) {
    const known = (w: Advice) => [...plan.warnings, ...warnings].some((o) => o.id === w.id)
    for (const phase of [phases.phaseA, phases.phaseB])
      warnings.push(...phase.warnings.filter((w) => !known(w)))
  }
  const io = options.io ?? NO_IO_FACTS
  return {
    plan,
    phases,
    warnings,
    streaming: decideStreaming(plan, io, options.datasetBytes ?? null),
    cache: sizeCache(plan, io, options.datasetBytes ?? null),
  }
}
