import { loraParamsPerLayer, type ModelParts, modelParts } from '../model/params.js'
import type { EstimateInput, EstimateResult, ModelSpec } from '../schemas/index.js'
import { activationMemory } from './activation-stage.js'
import { adaptersInFp32 } from './adapter-dtype.js'
import { reservation } from './allocator.js'
import { communicationBytes } from './communication.js'
import { fitVerdict, runKind } from './confidence.js'
import {
  ALLOCATOR_FRAGMENTATION,
  ATTENTION_EFFICIENCY,
  HOPPER_SUSTAINED_SHARE,
  INT8_BYTES_PER_PARAM,
  KERNEL_OVERHEAD_SECONDS,
  MATMUL_EFFICIENCY,
  NF4_BYTES_PER_PARAM,
  ZERO_REDUCE_BUCKET_PER_HIDDEN_SQUARED,
} from './constants.js'
import { cudaContextBytes } from './device.js'
import { gatheredWeightBytes } from './gathered.js'
import { frozenOtherElementBytes } from './loss.js'
import { adafactorStateElements, optimizerStateBytes } from './optimizer.js'
import { type StepThroughput, stepThroughput } from './throughput-stage.js'

// Parameter counts depend only on the spec; the planner evaluates thousands of settings per spec.
const partsCache = new WeakMap<ModelSpec, ModelParts>()
function partsOf(spec: ModelSpec): ModelParts {
  let parts = partsCache.get(spec)
  if (!parts) {
    parts = modelParts(spec)
    partsCache.set(spec, parts)
  }
  return parts
}

const SHARD_STAGE = { none: 0, zero1: 1, zero2: 2, zero3: 3, fsdp: 3 } as const

/** The global constants fitted to measurements; the validation's leave-one-source-out folds refit them. */
export interface EstimateTuning {
  matmulEfficiency: number
  /** Share of the matmul efficiency that attention's products reach. */
  attentionEfficiency: number
  allocatorFragmentation: number
  /** Seconds each launched kernel costs beyond its work (host dispatch and launch). */
  kernelOverheadSeconds: number
  /** Share of the matmul efficiency a Hopper GPU sustains at its power limit (`sustainedPeakShare`). */
  hopperSustainedShare: number
}

export const SHIPPED_TUNING: EstimateTuning = {
  matmulEfficiency: MATMUL_EFFICIENCY,
  attentionEfficiency: ATTENTION_EFFICIENCY,
  allocatorFragmentation: ALLOCATOR_FRAGMENTATION,
  kernelOverheadSeconds: KERNEL_OVERHEAD_SECONDS,
  hopperSustainedShare: HOPPER_SUSTAINED_SHARE,
}

/**
 * Per-device training memory and speed for one configuration. Pure and synchronous; takes the parsed input
 * (`EstimateInput.parse` fills defaults). Memory terms are each one's largest size during a step;
 * `peakAllocated` is the largest simultaneous sum, at the start of backward or at the optimizer step.
 * A pipeline of named stages, each reading the input and the stages before it.
 */
export function estimate(input: EstimateInput, tuning: EstimateTuning = SHIPPED_TUNING): EstimateResult {
  const params = parameterCounts(input)
  const bytes = precisionBytes(input, params)
  const shards = shardedMemory(input, params, bytes)
  const acts = activationMemory(input, params, bytes)
  const held: HeldMemory = { params, bytes, shards, acts }
  const peaks = phasePeaks(input, held)
  const alloc = allocatorMemory(input, tuning, held, peaks)
  const speed = stepThroughput(input, tuning, held)
  return estimateResult(input, held, peaks, alloc, speed)
}

export type ParameterCounts = ReturnType<typeof parameterCounts>
export type PrecisionBytes = ReturnType<typeof precisionBytes>
export type ShardedMemory = ReturnType<typeof shardedMemory>
export type ActivationMemory = ReturnType<typeof activationMemory>
export type PhasePeaks = ReturnType<typeof phasePeaks>
export type AllocatorMemory = ReturnType<typeof allocatorMemory>
/** What the model holds on a device before the step's peaks: the first four stages. */
export interface HeldMemory {
  params: ParameterCounts
  bytes: PrecisionBytes
  shards: ShardedMemory
  acts: ActivationMemory
}

/** Parameters: with adapters the base is frozen and only the adapters train. */
export function parameterCounts(input: EstimateInput) {
  const spec = input.model
  const parts = partsOf(spec)
  const lora = input.lora
  const adapters = lora ? spec.layers * loraParamsPerLayer(spec, lora) : 0
  const total = parts.total + adapters
  const trainable = lora ? adapters : parts.total
  const fullTraining = lora === null
  return { parts, adapters, total, trainable, fullTraining }
}

/** Precision: bytes per trainable weight, gradient, fp32 master copy and optimizer state element. */
export function precisionBytes(input: EstimateInput, { parts, fullTraining }: ParameterCounts) {
  const spec = input.model
  const precision = input.precision
  const fp32 = precision === 'fp32'
  const mixed = precision === 'fp16-mixed' || precision === 'bf16-mixed'
  const e = fp32 ? 4 : 2
  // Without an explicit sharding, offloading is ZeRO-Offload: optimizer on the host, gradients reduced to it.
  const stage = input.offload !== 'none' && input.sharding === 'none' ? 2 : SHARD_STAGE[input.sharding]
  const sharded = stage > 0
  // Sharded mixed precision (DeepSpeed, FSDP) keeps 16-bit working weights and gradients with an fp32 master
  // copy in the optimizer; autocast keeps the fp32 model and casts per op.
  // PEFT's adapters on a true 16-bit base train in fp32: their weights, gradients and states are fp32.
  const fp32Adapters = adaptersInFp32(input)
  const adapterBytes = fp32Adapters ? 4 : e
  const weightBytes = fp32 || (mixed && !sharded) || fp32Adapters ? 4 : 2
  const gradBytes = weightBytes
  // The residual stream is the working model's type: fp32 under autocast, 16-bit when the working weights are.
  const residualBytes = fp32 || (mixed && !sharded) ? 4 : 2
  const masterBytes = mixed && sharded ? 4 : 0
  const stateBytes = fp32 || mixed || fp32Adapters ? 4 : 2

  // Frozen base: 16-bit (or fp32) weights, or quantised linear layers with 16-bit embeddings and norms.
  const frozenLinear = fullTraining ? 0 : spec.layers * parts.layerLinear
  const frozenOther = fullTraining ? 0 : parts.total - frozenLinear
  const frozenElement = fp32 ? 4 : 2
  const quantBytes =
    input.quant === 'nf4'
      ? NF4_BYTES_PER_PARAM
      : input.quant === 'int8'
        ? INT8_BYTES_PER_PARAM
        : frozenElement
  const frozenBytes = fullTraining
    ? 0
    : frozenLinear * quantBytes + frozenOther * frozenOtherElementBytes(input, frozenElement)
  return {
    precision,
    fp32,
    mixed,
    e,
    stage,
    sharded,
    fp32Adapters,
    adapterBytes,
    weightBytes,
    gradBytes,
    residualBytes,
    masterBytes,
    stateBytes,
    frozenLinear,
    quantBytes,
    frozenBytes,
  }
}

/** Weights, gradients and optimizer state on one device after sharding and offloading, and the buffers beside them. */
export function shardedMemory(input: EstimateInput, params: ParameterCounts, bytes: PrecisionBytes) {
  const spec = input.model
  const lora = input.lora
  const h = spec.hidden
  const { parts, adapters, total, trainable, fullTraining } = params
  const { mixed, stage, sharded, weightBytes, gradBytes, masterBytes, stateBytes, frozenBytes } = bytes
  const ranks = input.gpus * input.nodes
  // The ranks one device's state is sharded over: ZeRO over the whole job, FSDP within its node (hybrid).
  const shardRanks = input.sharding === 'fsdp' ? input.gpus : ranks
  const offloadOptimizer = input.offload !== 'none'
  const offloadAll = input.offload === 'all'
  const weightShard = stage >= 3 ? shardRanks : 1
  const gradShard = stage >= 2 ? shardRanks : 1
  const optShard = stage >= 1 ? shardRanks : 1
  const trainableShard = trainable / optShard

  const weightsTotal = trainable * weightBytes + frozenBytes
  const optimizerTotal =
    optimizerStateBytes(input.optimizer, trainable, stateBytes, () =>
      adafactorStateElements(spec, lora, total),
    ) +
    masterBytes * trainable
  const weights = offloadAll ? 0 : weightsTotal / weightShard
  const gradients = (trainable * gradBytes) / gradShard
  const optimizer = offloadOptimizer ? 0 : optimizerTotal / optShard
  const host = (offloadOptimizer ? optimizerTotal + 4 * trainable : 0) + (offloadAll ? weightsTotal : 0)

  // DDP keeps its gradient buckets beside the gradients (gradient_as_bucket_view=False, the default).
  const ddpBuckets = ranks > 1 && stage === 0 ? gradients : 0
  const gathered = gatheredWeightBytes(parts, {
    stage,
    offloadAll,
    frozenStaysGathered: input.sharding === 'fsdp' && input.frozenStaysGathered,
    fullTraining,
    weightsTotal,
  })
  // Autocast casts fp32 weights to 16-bit per matmul and keeps the copies until backward has used them
  // (the embedding only where it is also the output projection).
  const headMatmul = input.head === 'lm' ? spec.vocab * h : 0
  const autocastCopies =
    mixed && !sharded ? 2 * (fullTraining ? spec.layers * parts.layerLinear + headMatmul : adapters) : 0
  // A quantised layer is dequantised to 16-bit for its matmul, one layer at a time.
  const dequantBuffer =
    !fullTraining && input.quant !== 'none' ? 2 * Math.max(h * spec.ffn, h * spec.heads * spec.headDim) : 0
  // DeepSpeed ZeRO-1/2 reduce the gradients through two 16-bit buckets during backward (ZeRO-3 and FSDP reduce
  // per gathered block, counted with the gathered weights).
  const reduceBuckets = stage === 1 || stage === 2 ? 2 * ZERO_REDUCE_BUCKET_PER_HIDDEN_SQUARED * h * h * 2 : 0
  return {
    ranks,
    shardRanks,
    offloadOptimizer,
    offloadAll,
    trainableShard,
    weightsTotal,
    weights,
    gradients,
    optimizer,
    host,
    ddpBuckets,
    gathered,
    headMatmul,
    autocastCopies,
    dequantBuffer,
    reduceBuckets,
  }
}

/** The two peaks: start of backward (everything saved plus the loss) and the optimizer step. */
export function phasePeaks(input: EstimateInput, { params, bytes, shards, acts }: HeldMemory) {
  const spec = input.model
  const lora = input.lora
  const h = spec.hidden
  const { parts, fullTraining } = params
  const { stateBytes } = bytes
  const { trainableShard, offloadOptimizer, weights, optimizer, ddpBuckets, gradients } = shards
  const { autocastCopies, gathered, dequantBuffer, reduceBuckets } = shards
  const { tokens, keptPerBlock, activations, workspace, logits } = acts
  // Optimizer-step temporaries.
  const largestTrainable = lora === null ? parts.largestTensor : lora.rank * Math.max(spec.ffn, h)
  let stepTemporaries = 0
  if (!offloadOptimizer) {
    if (input.optimizer === 'adamw' || input.optimizer === 'sgd-momentum') {
      stepTemporaries =
        input.optimizerImpl === 'foreach'
          ? (input.optimizer === 'adamw' ? stateBytes : 0) * trainableShard
          : input.optimizerImpl === 'per-tensor'
            ? 2 * stateBytes * largestTrainable
            : 0
    } else if (input.optimizer === 'adafactor') {
      stepTemporaries = 2 * 4 * largestTrainable
    }
  }

  const persistent = weights + optimizer + ddpBuckets
  const gradsDuringForward = input.gradAccum > 1 ? gradients : 0
  const backwardExtras = autocastCopies + gathered + dequantBuffer + reduceBuckets
  const backwardPeak =
    persistent + gradsDuringForward + backwardExtras + activations + Math.max(logits, workspace)
  // Backward's end in full training: every gradient is made but the first block's and the embedding's, while that
  // block's activations (recomputed under checkpointing) and its backward workspace are in use.
  const gradsAtEnd =
    input.gradAccum > 1 || !fullTraining
      ? gradients
      : gradients * (1 - (parts.layer + parts.embedding) / parts.total)
  const endExtras = backwardExtras - autocastCopies + (autocastCopies > 0 ? 2 * parts.layerLinear : 0)
  const firstBlock = tokens * keptPerBlock + workspace
  const backwardEndPeak = persistent + gradsAtEnd + endExtras + firstBlock
  const stepPeak = persistent + gradients + stepTemporaries
  const backwardMax = Math.max(backwardPeak, backwardEndPeak)
  const peakAllocated = Math.max(backwardMax, stepPeak)
  return {
    largestTrainable,
    stepTemporaries,
    backwardExtras,
    backwardPeak,
    endExtras,
    firstBlock,
    backwardEndPeak,
    stepPeak,
    backwardMax,
    peakAllocated,
  }
}

/** What the caching allocator reserves around the peaks, the CUDA context and the communication buffers. */
export function allocatorMemory(
  input: EstimateInput,
  tuning: EstimateTuning,
  { params, bytes, shards, acts }: HeldMemory,
  peaks: PhasePeaks,
) {
  const spec = input.model
  const h = spec.hidden
  const { fullTraining } = params
  const { e, residualBytes, gradBytes } = bytes
  const { ddpBuckets } = shards
  const { tokens, activations, workspace, logits } = acts
  const { largestTrainable, stepTemporaries, backwardExtras, backwardPeak, endExtras, firstBlock } = peaks
  const { backwardEndPeak, stepPeak, backwardMax } = peaks
  const device = input.device
  const context =
    input.cudaContextBytes ??
    (device ? cudaContextBytes(device) : cudaContextBytes({ kind: 'cuda', computeCapability: null }))
  const communication = communicationBytes(input, device)
  // The largest token-shaped tensor forward saves (an MoE expert sees its share of the tokens), against the
  // gradient of one MLP projection (or of one adapter) the optimizer step needs.
  const expertShare = spec.experts ? spec.experts.topK / spec.experts.count : 1
  const activationBlock =
    tokens *
    (input.gradCheckpointing ? h * residualBytes : Math.max(expertShare * spec.ffn * e, h * residualBytes))
  const gradientBlock = (fullTraining ? h * spec.ffn : largestTrainable) * gradBytes
  const { reserved, releasable } = reservation(
    {
      backwardPeak: backwardMax,
      backwardChurn:
        backwardPeak >= backwardEndPeak
          ? backwardExtras + activations + Math.max(logits, workspace)
          : endExtras + firstBlock,
      stepPeak,
      stepTemporaries,
      activations,
      activationBlock,
      gradientBlock,
      segmentCache: !device || device.kind === 'cuda' || device.kind === 'rocm' || device.kind === 'xpu',
    },
    tuning.allocatorFragmentation,
    device ? device.vramBytes - context - communication : Number.POSITIVE_INFINITY,
  )
  const totalBytes = reserved + context + communication
  const other = ddpBuckets + Math.max(backwardExtras + Math.max(0, workspace - logits), stepTemporaries)
  return { context, communication, reserved, releasable, totalBytes, other }
}

/** The `EstimateResult` of the stages: rounded bytes, the fit verdict against the device and its headroom. */
function estimateResult(
  input: EstimateInput,
  { params, shards, acts }: HeldMemory,
  peaks: PhasePeaks,
  alloc: AllocatorMemory,
  { throughput, speed }: StepThroughput,
): EstimateResult {
  const { parts, total, trainable } = params
  const { weights, gradients, optimizer, host } = shards
  const { activations, logits } = acts
  const { peakAllocated, backwardMax, stepPeak } = peaks
  const { context, communication, reserved, releasable, totalBytes, other } = alloc
  const device = input.device
  const capacity = device ? device.vramBytes : null
  // Cached segments the allocator releases when the device runs short never make a run fail.
  const neededBytes = totalBytes - releasable
  const fit = capacity === null ? null : fitVerdict(neededBytes, capacity, runKind(input))
  return {
    params: { total, trainable, embedding: parts.embedding + parts.head },
    perDevice: {
      weights: Math.round(weights),
      gradients: Math.round(gradients),
      optimizer: Math.round(optimizer),
      activations: Math.round(activations),
      logits: Math.round(logits),
      other: Math.round(other),
      peakAllocated: Math.round(peakAllocated),
      reserved: Math.round(reserved),
      releasable: Math.round(releasable),
      cudaContext: Math.round(context),
      communication: Math.round(communication),
      total: Math.round(totalBytes),
    },
    host: { total: Math.round(host) },
    fits: fit === null ? null : fit.verdict === 'fits',
    capacity,
    throughput,
    peakPhase: backwardMax >= stepPeak ? 'backward' : 'optimizer-step',
    speed,
    verdict: fit?.verdict ?? null,
    headroom: capacity === null ? null : Math.round(capacity - neededBytes),
    confidence: fit?.confidence ?? null,
  }
}
