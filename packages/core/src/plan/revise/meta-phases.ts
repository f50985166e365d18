import { RigfitError } from '../../errors.js'
import type { Advice, TrainingPlan } from '../../schemas/training-plan.js'
import { gibText } from '../../units.js'
import { effectiveBatchOf } from '../batch.js'
import { assertPlanConsistent } from './check-plan.js'
import { type PlanPoint, planPoint } from './estimate-input.js'
import { type Reestimate, reestimator } from './reestimate.js'
import { exporterAdvice, exporterTrace } from './revision-advice.js'
import { runFigures } from './run-figures.js'

/** Share of the token budget spent in phase A (bulk training at short sequence); phase B gets the rest. */
export const PHASE_A_TOKEN_SHARE = 0.9
/** Phase A trains at this fraction of the plan's sequence length. */
export const PHASE_A_SEQ_DIVISOR = 4
/** Below this, phase A's sequences would be too short to learn from. */
export const MIN_PHASE_A_SEQ = 128

/** One phase as the meta-config file lists it. */
export interface PhaseSummary {
  name: 'A' | 'B'
  dir: string
  purpose: string
  seq: number
  microBatch: number
  gradAccum: number
  effectiveBatch: number
  tokens: number
  steps: number
  hours: number
  tokensPerSecond: number
  /** Predicted bytes per device (what nvidia-smi would show) and its share of device memory. */
  memoryBytes: number
  usedFraction: number
  resumeFrom: string | null
}

export interface MetaPlans {
  phaseA: TrainingPlan
  phaseB: TrainingPlan
  phases: [PhaseSummary, PhaseSummary]
  totalTokens: number
  totalHours: number
}

type Phase = 'A' | 'B'

/** One phase's settings and the estimator's figures for them. */
interface PhasePoint {
  point: PlanPoint
  figures: Reestimate
}

/**
 * Phase A's batch shape: micro-batch x4 at a quarter of the sequence holds the tokens of a micro-step, and the
 * accumulation stays, so an optimizer step holds the plan's tokens (effective batch x4 in sequences). When that
 * micro-batch does not fit the plan's memory budget, the largest one that does and divides the sequences of a
 * step takes its place, with the accumulation raised to keep the tokens per optimizer step. Returns the chosen
 * shape and the x4 one it replaces.
 */
function phaseAShape(plan: TrainingPlan, seq: number, at: (point: PlanPoint) => Reestimate) {
  const s = plan.settings
  const sequencesPerStep = PHASE_A_SEQ_DIVISOR * s.microBatch * s.gradAccum
  const wanted = PHASE_A_SEQ_DIVISOR * s.microBatch
  let first: PhasePoint | null = null
  let last: PhasePoint | null = null
  for (let microBatch = wanted; microBatch >= 1; microBatch -= 1) {
    if (sequencesPerStep % microBatch !== 0) continue
    const point = { seq, microBatch, gradAccum: sequencesPerStep / microBatch, nodes: s.nodes }
    last = { point, figures: at(point) }
    first ??= last
    if (last.figures.fits) break
  }
  // Micro-batch 1 divides every step, so the loop ran at least once.
  return { chosen: last as PhasePoint, wanted: first as PhasePoint }
}

function phasePlan(
  plan: TrainingPlan,
  phase: Phase,
  { point, figures }: PhasePoint,
  tokens: number,
  extraWarnings: Advice[],
): TrainingPlan {
  const s = plan.settings
  const effectiveBatch = effectiveBatchOf({ ...point, gpus: s.gpus })
  const share = plan.tokens.budget > 0 ? tokens / plan.tokens.budget : 0
  const run = runFigures(plan, {
    tokens,
    tokensPerSecond: figures.throughput.tokensPerSecond,
    tokensPerStep: effectiveBatch * point.seq,
    watts: plan.power.watts,
  })
  const facts = {
    baseSeq: s.seq,
    baseMicroBatch: s.microBatch,
    baseGradAccum: s.gradAccum,
    baseTokens: plan.tokens.budget,
    share,
    predictedBytes: figures.deviceBytes,
    budgetBytes: Math.floor(figures.budgetBytes),
  }
  const reason =
    phase === 'A'
      ? `phase A: ${Math.round(PHASE_A_TOKEN_SHARE * 100)}% of the tokens at 1/${PHASE_A_SEQ_DIVISOR} of the sequence, the plan's tokens per optimizer step`
      : 'phase B: the remaining tokens at the full sequence length, resumed from phase A'
  const rule = `export.meta.phase-${phase.toLowerCase()}`
  const warnings = [...plan.warnings, ...extraWarnings]
  if (!figures.fits) {
    warnings.push(
      exporterAdvice(
        `meta-phase-${phase.toLowerCase()}-over-budget`,
        `Phase ${phase} needs ${gibText(figures.deviceBytes)} GiB per device, over the plan's ${gibText(figures.budgetBytes)} GiB budget.`,
      ),
    )
  }
  return {
    ...plan,
    workload: {
      ...plan.workload,
      description: `Phase ${phase} (sequence ${point.seq}) of ${plan.workload.description}`,
    },
    settings: {
      ...s,
      seq: point.seq,
      microBatch: point.microBatch,
      gradAccum: point.gradAccum,
      effectiveBatch,
    },
    memory: figures.memory,
    throughput: figures.throughput,
    tokens: {
      ...plan.tokens,
      budget: tokens,
      tokensPerParam: plan.params.total > 0 ? tokens / plan.params.total : 0,
      chinchillaTokens: Math.round(plan.tokens.chinchillaTokens * share),
      timeBudgetTokens:
        plan.tokens.timeBudgetTokens === null ? null : Math.floor(plan.tokens.timeBudgetTokens * share),
    },
    ...run,
    warnings,
    trace: [
      ...plan.trace,
      exporterTrace('seq', point.seq, rule, reason, facts),
      exporterTrace('microBatch', point.microBatch, rule, reason, facts),
      exporterTrace('gradAccum', point.gradAccum, rule, reason, facts),
    ],
  }
}

/**
 * Splits a plan into phase A (bulk training at a quarter of the sequence length, see phaseAShape) and phase B
 * (long-sequence extension at the plan's own settings). Each phase is a full plan: memory and speed re-estimated
 * for its own sequence and batch shape, and its own token budget, steps, time, energy and checkpoint cadence.
 */
export function deriveMetaPlans(plan: TrainingPlan): MetaPlans {
  const s = plan.settings
  const seqA = s.seq / PHASE_A_SEQ_DIVISOR
  if (!Number.isInteger(seqA) || seqA < MIN_PHASE_A_SEQ) {
    throw new RigfitError(
      'validation',
      'E_META_SEQ',
      `a two-phase run needs a sequence length divisible by ${PHASE_A_SEQ_DIVISOR} with phase A at least ${MIN_PHASE_A_SEQ}; the plan has ${s.seq}`,
      {
        suggestion: `Plan with a sequence of ${MIN_PHASE_A_SEQ * PHASE_A_SEQ_DIVISOR} or more, or export without --meta.`,
      },
    )
  }
  const tokensA = Math.round(plan.tokens.budget * PHASE_A_TOKEN_SHARE)
  const tokensB = plan.tokens.budget - tokensA
  const at = reestimator(plan)
  const { chosen, wanted } = phaseAShape(plan, seqA, at)
  const lowered =
    chosen === wanted
      ? []
      : [
          exporterAdvice(
            'meta-phase-a-micro-batch',
            `Phase A at micro-batch ${wanted.point.microBatch} would need ${gibText(wanted.figures.deviceBytes)} GiB per device, over the ${gibText(wanted.figures.budgetBytes)} GiB budget: it trains at micro-batch ${chosen.point.microBatch} with accumulation ${chosen.point.gradAccum}, the same tokens per optimizer step.`,
          ),
        ]
  const phaseA = phasePlan(plan, 'A', chosen, tokensA, lowered)
  const pointB = planPoint(plan)
  const phaseB = phasePlan(plan, 'B', { point: pointB, figures: at(pointB) }, tokensB, [])
  assertPlanConsistent(phaseA, 'phase A of the meta-config')
  assertPlanConsistent(phaseB, 'phase B of the meta-config')
  const summary = (
    p: TrainingPlan,
    name: 'A' | 'B',
    purpose: string,
    resumeFrom: string | null,
  ): PhaseSummary => ({
    name,
    dir: `phase-${name.toLowerCase()}`,
    purpose,
    seq: p.settings.seq,
    microBatch: p.settings.microBatch,
    gradAccum: p.settings.gradAccum,
    effectiveBatch: p.settings.effectiveBatch,
    tokens: p.tokens.budget,
    steps: p.time.steps,
    hours: p.time.totalHours,
    tokensPerSecond: p.throughput.tokensPerSecond,
    memoryBytes: p.memory.perDevice.total,
    usedFraction: p.memory.usedFraction,
    resumeFrom,
  })
  return {
    phaseA,
    phaseB,
    phases: [
      summary(phaseA, 'A', 'bulk training at short sequence length', null),
      summary(phaseB, 'B', 'long-sequence extension', 'phase-a'),
    ],
    totalTokens: plan.tokens.budget,
    totalHours: phaseA.time.totalHours + phaseB.time.totalHours,
  }
}
