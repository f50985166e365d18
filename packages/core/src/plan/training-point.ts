import { optimizerStepOn } from '../estimate/optimizer-step-device.js'
import type { InterconnectKind } from '../estimate/scaling.js'
import type { Attention, Offload, Optimizer, Precision, Quantization, Sharding } from '../schemas/common.js'
import { type EstimateDevice, type EstimateInput, LoraSpec } from '../schemas/estimate.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import type { StackMechanisms } from '../schemas/stack.js'
import type { TrainingPlan } from '../schemas/training-plan.js'
import { stackEstimateFields } from '../stack/stack-fields.js'
import { processesPerNode } from './batch.js'

/** The settings that decide a plan's memory and speed: what the planner searches and `rigfit estimate` takes. */
export interface TrainingPoint {
  model: ModelSpec
  seq: number
  microBatch: number
  gradAccum: number
  precision: Precision
  optimizer: Optimizer
  fusedOptimizer: boolean
  gradCheckpointing: boolean
  attention: Attention
  /** Data-parallel GPUs per node (1 on the CPU). */
  gpus: number
  nodes: number
  sharding: Sharding
  offload: Offload
  lora: LoraSpec | null
  quant: Quantization
  tf32: boolean
  /** torch.compile: fewer kernel launches and fused element-wise traffic. */
  compile: boolean
}

/**
 * The estimator input for a training point: the one mapping from settings to `estimate()`, used by the planner
 * for every candidate and for re-estimating a plan, so both give the same memory and tokens/s.
 */
export function pointEstimateInput(
  point: TrainingPoint,
  device: EstimateDevice | null,
  interconnect: InterconnectKind,
  stack?: StackMechanisms,
): EstimateInput {
  const input: EstimateInput = {
    model: point.model,
    seq: point.seq,
    microBatch: point.microBatch,
    gradAccum: point.gradAccum,
    precision: point.precision,
    optimizer: point.optimizer,
    gradCheckpointing: point.gradCheckpointing,
    attention: point.attention,
    gpus: point.gpus,
    nodes: point.nodes,
    interconnect,
    sharding: point.sharding,
    frozenStaysGathered: false,
    offload: point.offload,
    lora: point.lora,
    // Every exporter adapts the model with PEFT, which trains the adapters of a 16-bit base in fp32.
    adapterDtype: 'fp32',
    quant: point.quant,
    quantKeepsInputs: false,
    device,
    optimizerImpl: optimizerStepOn(point.fusedOptimizer ? 'fused' : 'foreach', device),
    tf32: point.tf32,
    compile: point.compile,
    upcastLogits: false,
    fusedLoss: false,
    head: point.model.kind === 'encoder' ? 'classification' : 'lm',
    cudaContextBytes: null,
    matmulEfficiency: null,
    lossChunks: 1,
    kbitFp32Casts: false,
    // Current releases of every stack run FlashAttention-2's generation of kernels.
    flashAttention2: true,
    pythonActivations: false,
    expertsOutsideAutocast: false,
  }
  return stack ? { ...input, ...stackEstimateFields(stack, point.seq, device) } : input
}

/** A plan's own training point, read back from its settings. */
export function planTrainingPoint(plan: TrainingPlan): TrainingPoint {
  const s = plan.settings
  return {
    model: plan.model,
    seq: s.seq,
    microBatch: s.microBatch,
    gradAccum: s.gradAccum,
    precision: s.precision,
    optimizer: s.optimizer,
    fusedOptimizer: s.fusedOptimizer,
    gradCheckpointing: s.gradCheckpointing,
    attention: s.attention,
    gpus: processesPerNode(s),
    nodes: s.nodes,
    sharding: s.sharding,
    offload: s.offload,
    lora: s.lora ? LoraSpec.parse({ rank: s.lora.rank, targets: s.lora.targets, dropout: 0 }) : null,
    quant: s.quant,
    tf32: s.tf32,
    compile: s.compile.enabled,
  }
}
