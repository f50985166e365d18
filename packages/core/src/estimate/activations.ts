import { distinctTargets, loraCopies } from '../model/lora-shapes.js'
import type { Attention, LoraSpec, ModelSpec } from '../schemas/index.js'
import { geluActivationOps } from './activation-ops.js'
import { EAGER_SOFTMAX_BYTES, RMSNORM_SAVED_BYTES } from './constants.js'

/** Which linear layers of a block have trainable inputs to keep, and how activations are stored. */
export interface ActivationContext {
  /** Bytes per activation element (2 for 16-bit and mixed precision, 4 for fp32). */
  elementBytes: number
  /** Bytes per element of the residual stream (fp32 under autocast: 16-bit branch outputs add to fp32 embeddings). */
  residualBytes: number
  attention: Attention
  /** The base weights train (full fine-tuning or pretraining). */
  fullTraining: boolean
  lora: Pick<LoraSpec, 'rank' | 'targets' | 'dropout'> | null
  /**
   * The frozen linear layers are bitsandbytes 4-bit layers whose autograd function keeps its input whenever that
   * input requires a gradient, trained weight or not (bitsandbytes before 0.43.2).
   */
  quantKeepsInputs?: boolean
  /**
   * Bytes per element of the adapters (PEFT's fp32 adapters on a 16-bit model: 4); the activations' when absent.
   * Adapters of another type than the activations each cast their input and keep that copy.
   */
  adapterBytes?: number
  /** The model's own activation code runs (EstimateInput.pythonActivations); one fused kernel when absent. */
  pythonActivations?: boolean
}

type Target = LoraSpec['targets'][number]

/**
 * Bytes backward keeps of the input that these linear layers share, per element of width `width`. PyTorch's
 * linear keeps its input only when its weight (or its LoRA adapter) trains. bitsandbytes' `MatMul4Bit.forward`
 * before 0.43.2 kept it (`ctx.tensors = (A, B)`) whenever any input needed a gradient, so every 4-bit layer of a
 * LoRA model kept its input; 0.43.2 keeps only the packed weight. Adapters in another type than the base each cast
 * the input and keep their own copy; adapters behind a dropout keep the dropped copy instead (`loraDropoutBytes`).
 */
function keptInputBytes(ctx: ActivationContext, targets: readonly Target[], width: number): number {
  if (ctx.fullTraining) return width * ctx.elementBytes
  const shared = ctx.quantKeepsInputs || (!adaptersCast(ctx) && adaptedWithoutDropout(ctx, targets) > 0)
  return adapterCastBytes(ctx, targets, width) + (shared ? width * ctx.elementBytes : 0)
}

/** Adapters of another type than the activations cast their input to it. */
function adaptersCast(ctx: ActivationContext): boolean {
  return ctx.adapterBytes !== undefined && ctx.adapterBytes !== ctx.elementBytes
}

/** The copies adapters in another type than the base cast of their input and keep, one per adapted layer. */
function adapterCastBytes(ctx: ActivationContext, targets: readonly Target[], width: number): number {
  return adaptersCast(ctx) ? adaptedWithoutDropout(ctx, targets) * width * (ctx.adapterBytes as number) : 0
}

function adaptedWithoutDropout(ctx: ActivationContext, targets: readonly Target[]): number {
  const lora = ctx.lora
  if (!lora || lora.dropout > 0) return 0
  let adapted = 0
  for (const target of targets) if (lora.targets.includes(target)) adapted++
  return adapted
}

/** PEFT gives each adapted layer its own dropout: a dropped copy of the input and a one-byte mask per element. */
function loraDropoutBytes(ctx: ActivationContext, target: Target, width: number): number {
  if (!ctx.lora || ctx.lora.dropout === 0 || !ctx.lora.targets.includes(target)) return 0
  return width * ((ctx.adapterBytes ?? ctx.elementBytes) + 1)
}

/**
 * Each adapter's B matrix keeps the rank-wide output of its A, in the adapter's type; an MLP's, per expert visited.
 * Counted for the adapted layers of one half of the block: the attention's, or the MLP's.
 */
function adapterRankBytes(
  spec: ModelSpec,
  ctx: ActivationContext,
  topK: number,
  attentionHalf: boolean,
): number {
  const lora = ctx.lora
  if (!lora) return 0
  let copies = 0
  // A token passes through one copy of an attention layer and of a dense MLP's, through top-k experts' and
  // through no gate of an ungated MLP.
  for (const target of distinctTargets(lora.targets)) {
    if (IN_ATTENTION[target] === attentionHalf) copies += Math.min(loraCopies(spec, target), topK)
  }
  return copies * lora.rank * (ctx.adapterBytes ?? ctx.elementBytes)
}

const IN_ATTENTION: Readonly<Record<Target, boolean>> = {
  q: true,
  k: true,
  v: true,
  o: true,
  gate: false,
  up: false,
  down: false,
}

/**
 * A pre-norm's saved bytes per element. LayerNorm keeps its input. The Hugging Face RMSNorm keeps its fp32 input
 * for `pow` and, when its weight trains, the normalised tensor for the weight's product: fp32 when the residual
 * stream is fp32 (autocast, fp32), cast back to 16-bit otherwise.
 */
export function normBytes(
  spec: ModelSpec,
  ctx: Pick<ActivationContext, 'elementBytes' | 'residualBytes' | 'fullTraining'>,
): number {
  if (spec.norm !== 'rmsnorm') return ctx.residualBytes
  const normalised = ctx.fullTraining ? (ctx.residualBytes === 4 ? 4 : ctx.elementBytes) : 0
  return Math.max(RMSNORM_SAVED_BYTES, ctx.residualBytes) + normalised
}

/**
 * Bytes one transformer block keeps for backward, per token of the micro-batch (eager attention adds a term
 * that grows with the sequence: heads x seq score bytes per token). Generalises Korthikanti et al. 2022 (sbh(34 + 5as/h) for a GPT block
 * in 16-bit with dropout) to GQA, gated MLPs, experts, fp32 norms, dropout settings and frozen layers: a frozen
 * linear layer needs its weight, not its input, for backward.
 */
export function blockActivationBytes(spec: ModelSpec, ctx: ActivationContext, seq: number): number {
  return attentionHalfBytes(spec, ctx, seq) + mlpHalfBytes(spec, ctx)
}

/** What the first half of a block keeps per token: its norm and the attention, up to the residual add. */
export function attentionHalfBytes(spec: ModelSpec, ctx: ActivationContext, seq: number): number {
  const e = ctx.elementBytes
  const h = spec.hidden
  const qd = spec.heads * spec.headDim
  const kvd = spec.kvHeads * spec.headDim
  const topK = spec.experts?.topK ?? 1

  // The norm's input (pre-norm: the residual stream; post-norm BERT: the sum before the norm).
  let perToken = h * normBytes(spec, ctx)
  perToken += keptInputBytes(ctx, ['q', 'k', 'v'], h)
  perToken += loraDropoutBytes(ctx, 'q', h) + loraDropoutBytes(ctx, 'k', h) + loraDropoutBytes(ctx, 'v', h)
  if (ctx.attention === 'eager') {
    // Q, K and V for the two batched matmuls; Hugging Face's repeat_kv expands K and V to every query head.
    perToken += 3 * qd * e
    const probs = spec.attentionDropout > 0 ? 1 + e : e === EAGER_SOFTMAX_BYTES ? 0 : e
    perToken += spec.heads * seq * (EAGER_SOFTMAX_BYTES + probs)
    perToken += keptInputBytes(ctx, ['o'], qd)
  } else {
    // Fused kernels keep Q, K, V, the output (which o_proj shares) and an fp32 log-sum-exp per head. PyTorch's
    // SDPA takes K and V expanded to every query head (Hugging Face's and LitGPT's repeat them before it);
    // FlashAttention reads them grouped.
    perToken += 2 * qd * e + 2 * (ctx.attention === 'sdpa' ? qd : kvd) * e + spec.heads * 4
    // o_proj's input is that kept output, unless its adapter casts a copy of its own.
    perToken += adapterCastBytes(ctx, ['o'], qd)
  }
  perToken += loraDropoutBytes(ctx, 'o', qd)
  perToken += adapterRankBytes(spec, ctx, topK, true)
  return perToken + (spec.hiddenDropout > 0 ? h : 0)
}

/** What the second half keeps per token: its norm and the MLP (or the experts and their router). */
export function mlpHalfBytes(spec: ModelSpec, ctx: ActivationContext): number {
  const e = ctx.elementBytes
  const h = spec.hidden
  const f = spec.ffn
  const topK = spec.experts?.topK ?? 1

  let perToken = h * normBytes(spec, ctx)
  // With experts every token visits topK of them.
  perToken += topK * keptInputBytes(ctx, spec.mlp === 'gelu' ? ['up'] : ['gate', 'up'], h)
  perToken += topK * (loraDropoutBytes(ctx, 'gate', h) + loraDropoutBytes(ctx, 'up', h))
  // GELU keeps its input (a Python GELU a few tensors more); a gated MLP keeps the gate, its activation and the up
  // projection for the product.
  const gelu = geluActivationOps(spec, ctx.pythonActivations ?? false)
  perToken += topK * f * e * (spec.mlp === 'gelu' ? gelu.savedTensors : 3)
  perToken += topK * keptInputBytes(ctx, ['down'], f)
  perToken += topK * loraDropoutBytes(ctx, 'down', f)
  perToken += adapterRankBytes(spec, ctx, topK, false)
  if (spec.experts) {
    // Router softmax in fp32, and each expert output kept for its routing-weight product; a router that trains
    // keeps its input too (the experts keep their own gathered copies).
    perToken += spec.experts.count * 4 + topK * h * e + (ctx.fullTraining ? h * e : 0)
  }
  return perToken + (spec.hiddenDropout > 0 ? h : 0)
}

/**
 * The largest transient a block's backward allocates beyond what the block keeps, per token: the gradients of the
 * MLP's widest intermediates, or of the attention scores under eager attention, plus the fp32 gradient of the
 * residual stream flowing through. Backward runs the MLP first and frees what the MLP half kept before the
 * attention's gradients are made, so the attention's transient stands on a block less its MLP half (`mlpHalf`,
 * passed where the caller has it).
 */
export function blockBackwardWorkspace(
  spec: ModelSpec,
  ctx: ActivationContext,
  seq: number,
  mlpHalf: number = mlpHalfBytes(spec, ctx),
): number {
  const e = ctx.elementBytes
  const topK = spec.experts?.topK ?? 1
  // Adapters in another type than the base (PEFT's fp32 on 16-bit) hold the widest gradient three times over
  // before the sums: in their own type, cast back to the base's, and the frozen layer's own.
  const castingMlp = adaptersCast(ctx) && (ctx.lora?.targets.some((target) => !IN_ATTENTION[target]) ?? false)
  const mlp = topK * spec.ffn * (2 * e + (castingMlp ? (ctx.adapterBytes as number) + 2 * e : 0))
  const attention =
    3 * spec.heads * spec.headDim * e + (ctx.attention === 'eager' ? spec.heads * seq * (4 + e) : 0)
  return Math.max(mlp, attention - mlpHalf) + spec.hidden * ctx.residualBytes
}
