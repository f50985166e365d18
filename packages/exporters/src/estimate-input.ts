import {
  type EstimateDevice,
  EstimateInput,
  LoraSpec,
  RigfitError,
  type Sharding,
  type TrainingPlan,
} from '@rigfit/core'
import { processesPerNode } from './plan-facts.js'

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

/**
 * The estimator's `gpus`: the ranks a device shards its training state over (and, above 1, the DDP gradient
 * buckets). ZeRO shards over every rank of the job. FSDP is counted within one node: the accelerate export
 * hybrid-shards across nodes, so its per-device memory must hold for a node-local shard (full sharding over
 * every rank, as the hf and Lightning exports do, only needs less).
 */
export function shardRanks(perNode: number, nodes: number, sharding: Sharding): number {
  return sharding === 'fsdp' ? perNode : perNode * nodes
}

/** The plan's LoRA settings in the estimator's terms; the plan schema stores the targets as free strings. */
function loraOf(plan: TrainingPlan): LoraSpec | null {
  const lora = plan.settings.lora
  if (lora === null) return null
  const parsed = LoraSpec.safeParse({ rank: lora.rank, targets: lora.targets, dropout: 0 })
  if (parsed.success) return parsed.data
  throw new RigfitError(
    'validation',
    'E_PLAN_LORA',
    `settings.lora.targets ${JSON.stringify(lora.targets)} names layers the estimator does not know`,
    { suggestion: 'Use q, k, v, o, gate, up and down, or regenerate the plan with `rigfit plan`.' },
  )
}

/**
 * The estimator input for the plan's settings at `point`, the way the planner builds it: fused AdamW where the
 * plan uses it, a classification head for encoders, and the plan's own CUDA context size.
 */
export function estimateInputAt(
  plan: TrainingPlan,
  point: PlanPoint,
  device: EstimateDevice | null,
): EstimateInput {
  const s = plan.settings
  return EstimateInput.parse({
    model: plan.model,
    seq: point.seq,
    microBatch: point.microBatch,
    gradAccum: point.gradAccum,
    precision: s.precision,
    optimizer: s.optimizer,
    gradCheckpointing: s.gradCheckpointing,
    attention: s.attention,
    gpus: shardRanks(processesPerNode(s), point.nodes, s.sharding),
    sharding: s.sharding,
    offload: s.offload,
    lora: loraOf(plan),
    quant: s.quant,
    device,
    optimizerImpl: s.fusedOptimizer ? 'fused' : 'foreach',
    tf32: s.tf32,
    head: plan.model.kind === 'encoder' ? 'classification' : 'lm',
    cudaContextBytes: plan.memory.perDevice.cudaContext,
  })
}
