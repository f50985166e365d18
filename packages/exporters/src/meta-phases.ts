import { RigfitError, type TrainingPlan } from '@rigfit/core'
import { exporterAdvice, exporterTrace } from './advice.js'
import { assertPlanConsistent } from './check-plan.js'

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
  resumeFrom: string | null
}

export interface MetaPlans {
  phaseA: TrainingPlan
  phaseB: TrainingPlan
  phases: [PhaseSummary, PhaseSummary]
  totalTokens: number
  totalHours: number
}

/**
 * Training FLOPs per token at a context length (Kaplan et al. 2020): 6N for the weights plus
 * 6 x layers x context x attention width for attention scores and their use.
 */
export function trainingFlopsPerToken(plan: TrainingPlan, seq: number): number {
  const attentionWidth = plan.model.heads * plan.model.headDim
  return 6 * plan.params.total + 6 * plan.model.layers * seq * attentionWidth
}

function phasePlan(
  plan: TrainingPlan,
  phase: 'A' | 'B',
  seq: number,
  microBatch: number,
  tokens: number,
  tokensPerSecond: number,
): TrainingPlan {
  const s = plan.settings
  const effectiveBatch = s.effectiveBatch * (microBatch / s.microBatch)
  const share = plan.tokens.budget > 0 ? tokens / plan.tokens.budget : 0
  const totalHours = tokensPerSecond > 0 ? tokens / tokensPerSecond / 3600 : 0
  const facts = { baseSeq: s.seq, baseMicroBatch: s.microBatch, baseTokens: plan.tokens.budget, share }
  const reason =
    phase === 'A'
      ? `phase A: ${Math.round(PHASE_A_TOKEN_SHARE * 100)}% of the tokens at 1/${PHASE_A_SEQ_DIVISOR} of the sequence, same tokens per micro-step`
      : `phase B: the remaining tokens at the full sequence length, resumed from phase A`
  return {
    ...plan,
    workload: {
      ...plan.workload,
      description: `Phase ${phase} (sequence ${seq}) of ${plan.workload.description}`,
    },
    settings: { ...s, seq, microBatch, effectiveBatch },
    throughput: {
      ...plan.throughput,
      tokensPerSecond,
      tokensPerSecondPerDevice:
        plan.throughput.tokensPerSecondPerDevice *
        (tokensPerSecond / Math.max(plan.throughput.tokensPerSecond, 1e-9)),
      stepSeconds: tokensPerSecond > 0 ? (effectiveBatch * seq) / tokensPerSecond : 0,
    },
    tokens: {
      ...plan.tokens,
      budget: tokens,
      tokensPerParam: plan.params.total > 0 ? tokens / plan.params.total : 0,
      chinchillaTokens: Math.round(plan.tokens.chinchillaTokens * share),
      timeBudgetTokens:
        plan.tokens.timeBudgetTokens === null ? null : Math.floor(plan.tokens.timeBudgetTokens * share),
    },
    time: { totalHours, steps: Math.ceil(tokens / (effectiveBatch * seq)) },
    power: { ...plan.power, energyKWh: (plan.power.watts * totalHours) / 1000 },
    warnings:
      phase === 'A'
        ? [
            ...plan.warnings,
            exporterAdvice(
              'meta-phase-a-memory',
              'Phase A memory is the full-sequence figure: the same tokens per micro-step with shorter attention never need more.',
            ),
          ]
        : plan.warnings,
    trace: [
      ...plan.trace,
      exporterTrace('seq', seq, `export.meta.phase-${phase.toLowerCase()}`, reason, facts),
      exporterTrace('microBatch', microBatch, `export.meta.phase-${phase.toLowerCase()}`, reason, facts),
    ],
  }
}

/**
 * Splits a plan into phase A (bulk training at a quarter of the sequence length, micro-batch scaled up so each
 * micro-step holds the same tokens) and phase B (long-sequence extension at the plan's own length). Each phase
 * is a full plan with its own token budget; phase A's speed follows the attention FLOPs it saves.
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
  const speedupA = trainingFlopsPerToken(plan, s.seq) / trainingFlopsPerToken(plan, seqA)
  const phaseA = phasePlan(
    plan,
    'A',
    seqA,
    s.microBatch * PHASE_A_SEQ_DIVISOR,
    tokensA,
    plan.throughput.tokensPerSecond * speedupA,
  )
  const phaseB = phasePlan(plan, 'B', s.seq, s.microBatch, tokensB, plan.throughput.tokensPerSecond)
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
