import { RigfitError, type TrainingPlan } from '@rigfit/core'
import { exporterAdvice, exporterTrace } from './advice.js'
import { assertPlanConsistent } from './check-plan.js'
import { processesPerNode } from './plan-facts.js'

/**
 * Share of linear speed-up assumed for each added node: gradients cross the network between nodes, which
 * intra-node links do not. An assumption, stated in a warning, until the monitor measures the real figure.
 */
export const MULTI_NODE_EFFICIENCY = 0.9

function nodeEfficiency(nodes: number): number {
  return nodes > 1 ? MULTI_NODE_EFFICIENCY : 1
}

/**
 * The plan run on `nodes` identical nodes: accumulation shrinks so the effective batch stays where the plan
 * put it, and throughput, time, power and energy scale with the node count. Per-device memory is kept.
 */
export function planForNodes(plan: TrainingPlan, nodes: number): TrainingPlan {
  const s = plan.settings
  if (nodes === s.nodes) return plan
  if (!Number.isInteger(nodes) || nodes < 1) {
    throw new RigfitError('usage', 'E_NODES', `--nodes must be a whole number of at least 1, got ${nodes}`)
  }
  if (s.device === 'mps') {
    throw new RigfitError(
      'validation',
      'E_NODES_MPS',
      'an mps plan cannot span several nodes: mps has no distributed backend',
      {
        suggestion: 'Plan for CUDA or ROCm machines with `rigfit plan --gpu ...` for multi-node training.',
      },
    )
  }
  const perStep = s.microBatch * processesPerNode(s) * nodes
  const gradAccum = Math.max(1, Math.round(s.effectiveBatch / perStep))
  const effectiveBatch = perStep * gradAccum
  const tokensPerSecond =
    (plan.throughput.tokensPerSecond / (s.nodes * nodeEfficiency(s.nodes))) * nodes * nodeEfficiency(nodes)
  const world = processesPerNode(s) * nodes
  const hoursAllowed =
    plan.tokens.timeBudgetTokens !== null && plan.throughput.tokensPerSecond > 0
      ? plan.tokens.timeBudgetTokens / plan.throughput.tokensPerSecond / 3600
      : null
  const timeBudgetTokens = hoursAllowed === null ? null : Math.floor(tokensPerSecond * hoursAllowed * 3600)
  const unbounded = plan.tokens.binding === 'dataset' ? plan.tokens.budget : plan.tokens.chinchillaTokens
  const budget = timeBudgetTokens === null ? unbounded : Math.min(unbounded, timeBudgetTokens)
  const binding =
    timeBudgetTokens !== null && timeBudgetTokens < unbounded
      ? 'time-budget'
      : plan.tokens.binding === 'dataset'
        ? 'dataset'
        : 'chinchilla'
  const totalHours = tokensPerSecond > 0 ? budget / tokensPerSecond / 3600 : 0
  const watts = (plan.power.watts / s.nodes) * nodes

  const warnings = [...plan.warnings]
  warnings.push(
    exporterAdvice(
      'multi-node-scaling',
      `Throughput for ${nodes} nodes assumes ${Math.round(MULTI_NODE_EFFICIENCY * 100)}% scaling per added node over the inter-node network; measure it with rigfit monitor.`,
    ),
  )
  if (effectiveBatch !== s.effectiveBatch) {
    warnings.push(
      exporterAdvice(
        'multi-node-effective-batch',
        `Effective batch ${s.effectiveBatch} is not reachable on ${nodes} nodes with micro-batch ${s.microBatch}; it becomes ${effectiveBatch}.`,
      ),
    )
  }
  if (s.sharding !== 'none') {
    warnings.push(
      exporterAdvice(
        'multi-node-memory',
        'Per-device memory is the single-node figure; sharding over more ranks only lowers it.',
      ),
    )
  }
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
      summary:
        s.nodes === 1
          ? `${nodes} nodes x ${plan.hardware.summary}`
          : plan.hardware.summary.replace(/^\d+ nodes x /, `${nodes} nodes x `),
    },
    settings: {
      ...s,
      nodes,
      gradAccum,
      effectiveBatch,
      strategy: s.strategy === 'single' ? 'ddp' : s.strategy,
      backend: s.backend === 'none' ? (s.device === 'cpu' ? 'gloo' : 'nccl') : s.backend,
    },
    throughput: {
      ...plan.throughput,
      tokensPerSecond,
      tokensPerSecondPerDevice: tokensPerSecond / world,
      stepSeconds: tokensPerSecond > 0 ? (effectiveBatch * s.seq) / tokensPerSecond : 0,
    },
    tokens: {
      ...plan.tokens,
      budget,
      timeBudgetTokens,
      binding,
      tokensPerParam: plan.params.total > 0 ? budget / plan.params.total : 0,
    },
    time: { totalHours, steps: Math.ceil(budget / (effectiveBatch * s.seq)) },
    power: { ...plan.power, watts, energyKWh: (watts * totalHours) / 1000 },
    warnings,
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
