import { RigfitError } from '../errors.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import { modelParts } from './params.js'

export type ShapeFamily = 'gpt2' | 'llama'

export interface ShapeOptions {
  /** Vocabulary size; 50257 (GPT-2 BPE) for gpt2, 32000 (Llama 2 SentencePiece) for llama. */
  vocab?: number
  /** Context length the model is trained at (its position table for gpt2). */
  seq?: number
  /** `gpt2`: learned positions, GELU 4x MLP, LayerNorm, biases, tied. `llama`: RoPE, SwiGLU, RMSNorm, no biases. */
  family?: ShapeFamily
}

/**
 * Width per layer a model of `params` parameters is given: 64 up to ~200M (GPT-2 small, Pythia-160M), rising
 * log-linearly to 128 at 7B and beyond (Llama 2 7B/13B: 4096/32, 5120/40).
 */
function targetAspect(params: number): number {
  const low = 2e8
  const high = 7e9
  if (params <= low) return 64
  if (params >= high) return 128
  return 64 * 2 ** (Math.log(params / low) / Math.log(high / low))
}

/** SwiGLU width: 8/3 x hidden rounded up to a multiple of 256, as Llama's reference code does. */
function swigluWidth(hidden: number): number {
  return Math.ceil((8 * hidden) / 3 / 256) * 256
}

/**
 * Head width people pick: 64 up to a hidden size of 2048 (GPT-2, Pythia, Llama 3.2 1B: 2048 = 32 x 64), 128 above
 * (Llama 3.2 3B: 3072 = 24 x 128; Llama 2/3 7B-70B).
 */
function headDimFor(hidden: number): number {
  return hidden <= 2048 ? 64 : 128
}

/** Head counts people pick: a power of two times 1, 3 or 5 (8, 12, 16, 20, 24, 32, 40, 48, 64, 96...). */
function usualHeadCount(heads: number): boolean {
  let odd = heads
  while (odd % 2 === 0) odd /= 2
  return odd === 1 || odd === 3 || odd === 5
}

/** Key-value heads shared by the query heads (grouped-query attention) from 1B up: 8, as Llama 3 and Mistral. */
const GQA_FROM_PARAMS = 1e9
const GQA_KV_HEADS = 8

function specFor(
  family: ShapeFamily,
  layers: number,
  hidden: number,
  vocab: number,
  seq: number,
  params: number,
): ModelSpec {
  const headDim = headDimFor(hidden)
  const llama = family === 'llama'
  const heads = hidden / headDim
  const spec: ModelSpec = {
    schemaVersion: 1,
    id: `${family}-generated`,
    name: `${family}-generated`,
    source: 'generated',
    modelType: llama ? 'llama' : 'gpt2',
    kind: 'decoder',
    layers,
    hidden,
    heads,
    kvHeads: llama && params >= GQA_FROM_PARAMS ? GQA_KV_HEADS : heads,
    headDim,
    ffn: llama ? swigluWidth(hidden) : 4 * hidden,
    vocab,
    maxPositions: seq,
    mlp: llama ? 'swiglu' : 'gelu',
    // The GPT-2 config rigfit exports names gelu_new, as GPT-2's own does.
    activation: llama ? 'fused' : 'gelu-new',
    norm: llama ? 'rmsnorm' : 'layernorm',
    positions: llama ? 'rope' : 'learned',
    // Small Llama-style models tie their embeddings (Llama 3.2 1B/3B, SmolLM); larger ones do not.
    tiedEmbeddings: llama ? params < 2e9 : true,
    bias: llama ? 'none' : 'all',
    experts: null,
    typeVocab: 0,
    attentionDropout: 0,
    hiddenDropout: 0,
  }
  return spec
}

/**
 * Hidden sizes a model of `params` may take: multiples of 128 whose head count is a usual one, and, with
 * grouped-query attention, a multiple of the key-value heads above them.
 */
function hiddenCandidates(family: ShapeFamily, params: number): number[] {
  const out: number[] = []
  for (let hidden = 128; hidden <= 32768; hidden += 128) {
    const heads = hidden / headDimFor(hidden)
    if (!Number.isInteger(heads) || !usualHeadCount(heads)) continue
    if (
      family === 'llama' &&
      params >= GQA_FROM_PARAMS &&
      (heads % GQA_KV_HEADS !== 0 || heads <= GQA_KV_HEADS)
    )
      continue
    out.push(hidden)
  }
  return out
}

function formatCount(params: number): string {
  return params >= 1e9 ? `${(params / 1e9).toFixed(1).replace(/\.0$/, '')}b` : `${Math.round(params / 1e6)}m`
}

/**
 * A decoder shape for from-scratch pretraining with about `paramTarget` parameters, as people shape them: head dim
 * 64 (128 above a hidden size of 2048), hidden a multiple of 128 with a usual head count, grouped-query attention
 * with 8 key-value heads from 1B up (Llama-style), and the layer count that keeps hidden/layers near the usual
 * aspect ratio for that size. Deterministic, so the planner can search over targets.
 */
export function generateModelShape(paramTarget: number, opts: ShapeOptions = {}): ModelSpec {
  if (!Number.isFinite(paramTarget) || paramTarget < 1e6 || paramTarget > 1e12) {
    throw new RigfitError('input', 'E_MODEL_SHAPE', `cannot generate a model of ${paramTarget} parameters`, {
      suggestion: 'Ask for between 1 million and 1 trillion parameters.',
    })
  }
  const family = opts.family ?? 'llama'
  const vocab = opts.vocab ?? (family === 'gpt2' ? 50257 : 32000)
  const seq = opts.seq ?? (family === 'gpt2' ? 1024 : 2048)
  const aspect = targetAspect(paramTarget)

  let best: { spec: ModelSpec; score: number } | undefined
  for (const hidden of hiddenCandidates(family, paramTarget)) {
    // Parameters grow linearly with the layer count: solve for the count that lands on the target, then try the
    // whole numbers either side.
    const one = modelParts(specFor(family, 1, hidden, vocab, seq, paramTarget)).total
    const perLayer = modelParts(specFor(family, 2, hidden, vocab, seq, paramTarget)).total - one
    const exact = (paramTarget - (one - perLayer)) / perLayer
    for (const layers of new Set([Math.floor(exact), Math.ceil(exact)])) {
      if (layers < 1 || layers > 160) continue
      const spec = specFor(family, layers, hidden, vocab, seq, paramTarget)
      const total = one + (layers - 1) * perLayer
      const score =
        Math.abs(Math.log(total / paramTarget)) + 0.25 * Math.abs(Math.log(hidden / layers / aspect))
      if (!best || score < best.score) best = { spec, score }
    }
    // Below one layer's worth the smallest model of this width is one layer.
    if (exact < 1) {
      const spec = specFor(family, 1, hidden, vocab, seq, paramTarget)
      const score = Math.abs(Math.log(one / paramTarget)) + 0.25 * Math.abs(Math.log(hidden / aspect))
      if (!best || score < best.score) best = { spec, score }
    }
  }
  const spec = (best as { spec: ModelSpec }).spec
  const label = `${family}-${formatCount(modelParts(spec).total)}`
  return { ...spec, id: label, name: `${label} (generated: ${spec.layers} layers x ${spec.hidden} hidden)` }
}
