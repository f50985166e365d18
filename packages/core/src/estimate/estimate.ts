import { loraParamsPerLayer, type ModelParts, modelParts } from '../model/params.js'
import type { EstimateInput, EstimateResult, ModelSpec } from '../schemas/index.js'
import {
  type ActivationContext,
  attentionHalfBytes,
  blockBackwardWorkspace,
  mlpHalfBytes,
  normBytes,
} from './activations.js'
import { adaptersInFp32 } from './adapter-dtype.js'
import { reservation } from './allocator.js'
import { attentionExtraFlops } from './attention-work.js'
import { communicationBytes } from './communication.js'
import { fitVerdict, runKind } from './confidence.js'
import {
  ALLOCATOR_FRAGMENTATION,
  ATTENTION_EFFICIENCY,
  BANDWIDTH_EFFICIENCY,
  ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE,
  HOPPER_SUSTAINED_SHARE,
  HOST_OPTIMIZER_GBS,
  INT8_BYTES_PER_PARAM,
  KERNEL_OVERHEAD_SECONDS,
  MATMUL_EFFICIENCY,
  NF4_BYTES_PER_PARAM,
  PCIE_EFFECTIVE_GBS,
  UNFUSED_OPTIMIZER_TRAFFIC_FACTOR,
  ZERO_REDUCE_BUCKET_PER_HIDDEN_SQUARED,
} from './constants.js'
import { cudaContextBytes, devicePeakTflops } from './device.js'
import { sustainedPeakShare } from './device-efficiency.js'
import { eagerElementwiseBytes } from './elementwise.js'
import { adapterFlopsPerToken, attentionFlopsPerToken, flopsPerToken } from './flops.js'
import { gatheredWeightBytes } from './gathered.js'
import { kernelsPerMicroStep, optimizerStepKernels } from './kernels.js'
import { frozenOtherElementBytes, logitBytesPerVocabEntry } from './loss.js'
import { adafactorStateElements, OPTIMIZER_STEP_TRAFFIC, optimizerStateBytes } from './optimizer.js'
import { scalingEfficiency } from './scaling.js'

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
 */
export function estimate(input: EstimateInput, tuning: EstimateTuning = SHIPPED_TUNING): EstimateResult {
  const spec = input.model
  const parts = partsOf(spec)
  const lora = input.lora
  const ranks = input.gpus * input.nodes
  // The ranks one device's state is sharded over: ZeRO over the whole job, FSDP within its node (hybrid).
  const shardRanks = input.sharding === 'fsdp' ? input.gpus : ranks
  const h = spec.hidden

  // Parameters: with adapters the base is frozen and only the adapters train.
  const adapters = lora ? spec.layers * loraParamsPerLayer(spec, lora) : 0
  const total = parts.total + adapters
  const trainable = lora ? adapters : parts.total
  const fullTraining = lora === null

  // Precision: bytes per trainable weight, gradient, fp32 master copy and optimizer state element.
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

  const offloadOptimizer = input.offload !== 'none'
  const offloadAll = input.offload === 'all'
  const weightShard = stage >= 3 ? shardRanks : 1
  const gradShard = stage >= 2 ? shardRanks : 1
  const optShard = stage >= 1 ? shardRanks : 1

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

  // Activations of the micro-batch.
  const tokens = input.microBatch * input.seq
  const ctx: ActivationContext = {
    elementBytes: e,
    residualBytes,
    attention: input.attention,
    fullTraining,
    lora,
    quantKeepsInputs: !fullTraining && input.quant === 'nf4' && input.quantKeepsInputs,
    adapterBytes,
  }
  const mlpHalf = mlpHalfBytes(spec, ctx)
  const block = attentionHalfBytes(spec, ctx, input.seq) + mlpHalf
  const keptPerBlock = input.gradCheckpointing ? h * residualBytes : block
  const normSaved = normBytes(spec, ctx)
  const lmHead = input.head === 'lm'
  const edges =
    (spec.hiddenDropout > 0 ? h : 0) +
    (spec.kind === 'encoder' ? h * normSaved : h * normSaved + (fullTraining && lmHead ? h * e : 0))
  const activations = tokens * (spec.layers * keptPerBlock + edges)
  const workspace =
    tokens * (blockBackwardWorkspace(spec, ctx, input.seq, mlpHalf) + (input.gradCheckpointing ? block : 0))

  // Logits and loss at the start of backward, or one chunk of them under a fused linear cross-entropy.
  let logits = 0
  if (lmHead) {
    const lossBytes = mixed || fp32 || input.upcastLogits ? 4 : e
    const perToken = spec.vocab * logitBytesPerVocabEntry(e, lossBytes, input.lossChunks)
    if (input.fusedLoss) {
      // Liger's chunking keeps a chunk about the size of the hidden states (BT / ceil(V / H) tokens) and an
      // fp32 gradient of the hidden states; the head's weight gradient is already among the gradients.
      const chunk = Math.min(
        tokens,
        2 ** Math.ceil(Math.log2(Math.max(1, tokens / Math.ceil(spec.vocab / h)))),
      )
      logits = chunk * perToken + tokens * h * 4
    } else {
      logits = tokens * perToken
    }
  } else {
    logits = input.microBatch * h * e * 2
  }

  // Optimizer-step temporaries.
  const trainableShard = trainable / optShard
  const largestTrainable = fullTraining ? parts.largestTensor : lora.rank * Math.max(spec.ffn, h)
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

  // The two peaks: start of backward (everything saved plus the loss) and the optimizer step.
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

  const capacity = device ? device.vramBytes : null

  let throughput: EstimateResult['throughput'] = null
  let speed: EstimateResult['speed'] = null
  if (device) {
    const peakTflops = devicePeakTflops(device, precision, input.tf32)
    const flopsOpts = { gradCheckpointing: input.gradCheckpointing, lora, head: input.head }
    const hardwareFlops = flopsPerToken(spec, input.seq, flopsOpts)
    const modelFlops = input.gradCheckpointing
      ? flopsPerToken(spec, input.seq, { ...flopsOpts, gradCheckpointing: false })
      : hardwareFlops
    const tokensPerStep = tokens * input.gradAccum
    const efficiency =
      (input.matmulEfficiency ?? tuning.matmulEfficiency) *
      sustainedPeakShare(device, tuning.hopperSustainedShare)
    // fp32 adapters multiply at the fp32 (or TF32) rate while the 16-bit base runs on the tensor cores.
    const fp32AdapterFlops = fp32Adapters ? adapterFlopsPerToken(spec, flopsOpts) : 0
    const fp32AdapterTime = fp32Adapters ? fp32AdapterFlops / devicePeakTflops(device, 'fp32', input.tf32) : 0
    // Attention's products run at their own, lower rate: counted as if its FLOPs were that much larger.
    const attentionFlops = attentionFlopsPerToken(spec, input.seq, input.gradCheckpointing)
    const attentionExtra = attentionExtraFlops(input, attentionFlops, tuning.attentionEfficiency)
    const matmulSeconds =
      (tokensPerStep * ((hardwareFlops + attentionExtra - fp32AdapterFlops) / peakTflops + fp32AdapterTime)) /
      (1e12 * efficiency)

    const bandwidth = device.memoryBandwidthGBs * 1e9 * BANDWIDTH_EFFICIENCY
    const recompute = input.gradCheckpointing ? 4 / 3 : 1
    // Element-wise work moves every saved byte a few times; weights are read by forward and by each backward
    // matmul (one fewer for frozen weights); quantised weights are dequantised in every pass that uses them.
    // Under torch.compile the element-wise chains are fused: each saved byte is written and read back a few
    // times. Eager PyTorch runs every op on its own, so the block's traffic is counted op by op.
    const blockTraffic = input.compile
      ? ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE * block
      : eagerElementwiseBytes(
          spec,
          {
            elementBytes: e,
            residualBytes,
            attention: input.attention,
            lora,
            adapterBytes,
          },
          input.seq,
        )
    const elementwise =
      tokens * spec.layers * blockTraffic * recompute + ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE * logits
    const matmulWeights = spec.layers * parts.layerActive + headMatmul
    const weightReads = (fullTraining ? 3 : 2) * recompute * matmulWeights * e
    const dequant =
      !fullTraining && input.quant !== 'none'
        ? (input.gradCheckpointing ? 3 : 2) * frozenLinear * (quantBytes + 4)
        : 0
    const memorySeconds = (input.gradAccum * (elementwise + weightReads + dequant)) / bandwidth

    const unfused = input.optimizerImpl === 'fused' ? 1 : UNFUSED_OPTIMIZER_TRAFFIC_FACTOR
    const stepTraffic = OPTIMIZER_STEP_TRAFFIC[input.optimizer] * (stateBytes / 4) * unfused
    // Offloaded, each GPU has its own PCIe link, but the ranks of a node step their shards on one host's memory
    // bandwidth at the same time.
    const optimizerSeconds = offloadOptimizer
      ? (trainableShard * 2 * gradBytes) / (PCIE_EFFECTIVE_GBS * 1e9) +
        (input.gpus * trainableShard * OPTIMIZER_STEP_TRAFFIC[input.optimizer]) / (HOST_OPTIMIZER_GBS * 1e9)
      : (trainableShard * stepTraffic) / bandwidth
    // Offloaded weights cross PCIe for forward and backward in every micro-batch.
    const offloadSeconds = offloadAll
      ? (input.gradAccum * 2 * weightsTotal) / shardRanks / (PCIE_EFFECTIVE_GBS * 1e9)
      : 0

    // Data parallelism pays for its gradient (and, sharded, parameter) traffic on every rank.
    const scaling =
      input.interconnect === null
        ? 1
        : scalingEfficiency(input.gpus, input.nodes, input.sharding, input.interconnect)
    // A GPU is fed one kernel at a time by the host: each launch costs a fixed time, whatever the kernel's size.
    const kernelSeconds =
      device.kind === 'cpu'
        ? 0
        : tuning.kernelOverheadSeconds *
          (input.gradAccum * kernelsPerMicroStep(input) + optimizerStepKernels(input))
    const stepSeconds =
      (matmulSeconds + memorySeconds + kernelSeconds + optimizerSeconds + offloadSeconds) / scaling
    const perDevice = tokensPerStep / stepSeconds
    throughput = {
      tokensPerSecond: perDevice * ranks,
      tokensPerSecondPerDevice: perDevice,
      stepSeconds,
      mfu: (perDevice * modelFlops) / (peakTflops * 1e12),
    }
    speed = { flopsPerToken: hardwareFlops, peakTflops, computeShare: matmulSeconds / stepSeconds }
  }

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
