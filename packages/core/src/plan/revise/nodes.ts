import { RigfitError } from '../../errors.js'
import type { Advice, TrainingPlan } from '../../schemas/training-plan.js'
import { gibText } from '../../units.js'
import { effectiveBatchOf, processesPerNode, worldSize } from '../batch.js'
import { tokenBudget } from '../token-budget.js'
import { assertPlanConsistent } from './check-plan.js'
import { interNodeEfficiency, reestimator } from './reestimate.js'
import { exporterAdvice, exporterTrace } from './revision-advice.js'
import { runFigures } from './run-figures.js'

/**
 * The plan run on `nodes` identical nodes: accumulation shrinks so the effective batch stays where the plan
 * put it; per-device memory and speed are re-estimated for the new accumulation and rank count (ZeRO shards
 * over more ranks; DDP changes only through accumulation and its gradient buckets), the job's speed follows
 * core's inter-node scaling efficiency, and tokens, time, steps, power and energy are derived from them.
 */
export function planForNodes(plan: TrainingPlan, nodes: number): TrainingPlan {
  const s = plan.settings
  if (nodes === s.nodes) return plan
  assertNodesPossible(plan, nodes)
  // Sequences one accumulation step takes across the new job; accumulation rounds to hold the effective batch.
  const perStep = s.microBatch * worldSize({ gpus: s.gpus, nodes })
  const gradAccum = Math.max(1, Math.round(s.effectiveBatch / perStep))
  const effectiveBatch = effectiveBatchOf({ microBatch: s.microBatch, gradAccum, gpus: s.gpus, nodes })
  const figures = reestimator(plan)({ seq: s.seq, microBatch: s.microBatch, gradAccum, nodes })
  const budget = tokenBudgetOnNodes(plan, figures.throughput.tokensPerSecond)
  const run = runFigures(plan, {
    tokens: budget.budget,
    tokensPerSecond: figures.throughput.tokensPerSecond,
    tokensPerStep: effectiveBatch * s.seq,
    watts: (plan.power.watts / s.nodes) * nodes,
  })
  const facts = {
    nodesBefore: s.nodes,
    gpusPerNode: processesPerNode(s),
    targetEffectiveBatch: s.effectiveBatch,
  }
  const scaled: TrainingPlan = {
    ...plan,
    hardware: {
      ...plan.hardware,
      nodes,
      summary: `${nodes > 1 ? `${nodes} nodes x ` : ''}${plan.hardware.summary.replace(/^\d+ nodes x | x \d+ nodes$/, '')}`,
    },
    settings: {
      ...s,
      nodes,
      gradAccum,
      effectiveBatch,
      strategy: s.strategy === 'single' ? 'ddp' : s.strategy,
      backend: s.backend === 'none' ? (s.device === 'cpu' ? 'gloo' : 'nccl') : s.backend,
    },
    memory: figures.memory,
    throughput: figures.throughput,
    tokens: budget,
    ...run,
    warnings: [...plan.warnings, ...nodeWarnings(plan, nodes, effectiveBatch, figures)],
    trace: [
      ...plan.trace,
      exporterTrace('nodes', nodes, 'export.nodes', `--nodes ${nodes} on export`, facts),
      exporterTrace(
        'gradAccum',
        gradAccum,
        'export.nodes.accumulation',
        'accumulation rescaled to hold the effective batch across nodes',
        facts,
      ),
    ],
  }
  assertPlanConsistent(scaled, `the plan on ${nodes} nodes`)
  return scaled
}

/** A node count is whole and at least 1, and an mps plan stays on one node. */
function assertNodesPossible(plan: TrainingPlan, nodes: number): void {
  if (!Number.isInteger(nodes) || nodes < 1) {
    throw new RigfitError('usage', 'E_NODES', `--nodes must be a whole number of at least 1, got ${nodes}`)
  }
  if (plan.settings.device === 'mps') {
    throw new RigfitError(
      'validation',
      'E_NODES_MPS',
      'an mps plan cannot span several nodes: mps has no distributed backend',
      {
        suggestion: 'Plan for CUDA or ROCm machines with `rigfit plan --gpu ...` for multi-node training.',
      },
    )
  }
}

/**
 * The token budget as the planner sets it: the time budget (the plan's hours at the plan's rate) binds at the
 * new rate, else the dataset or the Chinchilla target the plan had.
 */
function tokenBudgetOnNodes(plan: TrainingPlan, tokensPerSecond: number) {
  const hoursAllowed =
    plan.tokens.timeBudgetTokens !== null && plan.throughput.tokensPerSecond > 0
      ? plan.tokens.timeBudgetTokens / plan.throughput.tokensPerSecond / 3600
      : null
  // The bounds are weighed as the planner weighs them for the workload's kind: a fine-tune has no Chinchilla
  // bound, so a time budget that bound it keeps binding; a recorded dataset or target budget already holds its
  // epochs.
  return tokenBudget({
    params: plan.params.total,
    tokensPerParam: plan.params.total > 0 ? plan.tokens.chinchillaTokens / plan.params.total : 0,
    tokensPerSecond,
    maxHours: hoursAllowed,
    kind: plan.workload.kind,
    datasetTokens: plan.tokens.binding === 'dataset' ? plan.tokens.budget : null,
    epochs: 1,
    targetTokens: plan.tokens.binding === 'target' ? plan.tokens.budget : null,
  })
}

/** What running on other nodes assumes or changes: scaling, the effective batch, FSDP's memory, the budget. */
function nodeWarnings(
  plan: TrainingPlan,
  nodes: number,
  effectiveBatch: number,
  figures: { fits: boolean; deviceBytes: number; budgetBytes: number },
): Advice[] {
  const s = plan.settings
  const scaling = interNodeEfficiency(nodes)
  const warnings: Advice[] = []
  if (nodes > 1) {
    warnings.push(
      exporterAdvice(
        'multi-node-scaling',
        `Throughput for ${nodes} nodes assumes ${Math.round(scaling * 100)}% of linear scaling across nodes over the cluster network; measure it with rigfit monitor.`,
      ),
    )
  }
  if (effectiveBatch !== s.effectiveBatch) {
    warnings.push(
      exporterAdvice(
        'multi-node-effective-batch',
        `Effective batch ${s.effectiveBatch} is not reachable on ${nodes} nodes with micro-batch ${s.microBatch}; it becomes ${effectiveBatch}.`,
      ),
    )
  }
  if (s.sharding === 'fsdp' && nodes > 1) {
    warnings.push(
      exporterAdvice(
        'multi-node-memory',
        'FSDP memory is estimated for sharding within each node (the accelerate export uses HYBRID_SHARD across nodes); sharding over every rank needs less.',
      ),
    )
  }
  if (!figures.fits) {
    warnings.push(
      exporterAdvice(
        'multi-node-over-budget',
        `On ${nodes} nodes each device needs ${gibText(figures.deviceBytes)} GiB, over the plan's ${gibText(figures.budgetBytes)} GiB budget.`,
      ),
    )
  }
  return warnings
}
