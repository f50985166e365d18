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

function specFor(
  family: ShapeFamily,
  layers: number,
  hidden: number,
  vocab: number,
  seq: number,
  params: number,
): ModelSpec {
  const headDim = hidden >= 2048 ? 128 : 64
  const llama = family === 'llama'
  const spec: ModelSpec = {
    schemaVersion: 1,
    id: `${family}-generated`,
    name: `${family}-generated`,
    source: 'generated',
    modelType: llama ? 'llama' : 'gpt2',
    kind: 'decoder',
    layers,
    hidden,
    heads: hidden / headDim,
    kvHeads: hidden / headDim,
    headDim,
    ffn: llama ? swigluWidth(hidden) : 4 * hidden,
    vocab,
    maxPositions: seq,
    mlp: llama ? 'swiglu' : 'gelu',
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

function formatCount(params: number): string {
  return params >= 1e9 ? `${(params / 1e9).toFixed(1).replace(/\.0$/, '')}b` : `${Math.round(params / 1e6)}m`
}

/**
 * A decoder shape for from-scratch pretraining with about `paramTarget` parameters: head dim 64 (128 from a
 * hidden size of 2048), hidden a multiple of the head dim, and the layer count that keeps hidden/layers near
 * the usual aspect ratio for that size. Deterministic, so the planner can search over targets.
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
  for (let layers = 1; layers <= 160; layers++) {
    // Per-layer parameters are ~12 h^2 in both families; solve 12 L h^2 + E h = N for h, then try the
    // neighbouring multiples of the head-dim step.
    const embedPerHidden =
      vocab * (family === 'llama' && paramTarget >= 2e9 ? 2 : 1) + (family === 'gpt2' ? seq : 0)
    const a = 12 * layers
    const h = (-embedPerHidden + Math.sqrt(embedPerHidden ** 2 + 4 * a * paramTarget)) / (2 * a)
    const step = h >= 2048 ? 128 : 64
    for (const hidden of [Math.floor(h / step) * step, Math.ceil(h / step) * step]) {
      if (hidden < 64) continue
      const spec = specFor(family, layers, hidden, vocab, seq, paramTarget)
      const total = modelParts(spec).total
      const score =
        Math.abs(Math.log(total / paramTarget)) + 0.25 * Math.abs(Math.log(hidden / layers / aspect))
      if (!best || score < best.score) best = { spec, score }
    }
  }
  const spec = (best as { spec: ModelSpec }).spec
  const label = `${family}-${formatCount(modelParts(spec).total)}`
  return { ...spec, id: label, name: `${label} (generated: ${spec.layers} layers x ${spec.hidden} hidden)` }
}
