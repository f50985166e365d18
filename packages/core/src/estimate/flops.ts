import { loraParamsPerLayer } from '../model/params.js'
import type { LoraSpec, ModelSpec } from '../schemas/index.js'

export interface FlopsOptions {
  gradCheckpointing: boolean
  /** With adapters, backward skips the weight gradients of the frozen base. */
  lora?: Pick<LoraSpec, 'rank' | 'targets'> | null
  /** `classification` runs the head on one position only, so the vocabulary projection costs nothing. */
  head?: 'lm' | 'classification'
}

/** Weight elements a token multiplies through: every block's projections (top-k experts) and the output head. */
export function matmulParamsPerToken(spec: ModelSpec, head: 'lm' | 'classification' = 'lm'): number {
  const gated = spec.mlp !== 'gelu'
  const h = spec.hidden
  const attn = h * spec.heads * spec.headDim * 2 + 2 * h * spec.kvHeads * spec.headDim
  const expert = (gated ? 3 : 2) * h * spec.ffn
  const topK = spec.experts?.topK ?? 1
  const router = spec.experts ? h * spec.experts.count : 0
  const perLayer = attn + topK * expert + router
  return spec.layers * perLayer + (head === 'lm' ? spec.vocab * h : 0)
}

/**
 * Training FLOPs per token: forward 2N plus attention 4·L·s·d (QKᵀ and PV over s positions), backward twice the
 * forward (PaLM, Chowdhery et al. 2022, App. B: 6N + 12·L·s·d). A frozen base skips its weight gradients
 * (4N + 6·adapters); full recomputation under gradient checkpointing runs the forward again (x4/3 for full
 * training). N counts weights a token multiplies through, so experts count top-k times and embeddings not at all.
 */
export function flopsPerToken(spec: ModelSpec, seq: number, opts: FlopsOptions): number {
  const n = matmulParamsPerToken(spec, opts.head)
  const attentionForward = attentionForwardFlops(spec, seq)
  const forward = 2 * n + attentionForward
  const recompute = opts.gradCheckpointing ? forward : 0
  if (opts.lora) return forward + 2 * n + 2 * attentionForward + recompute + adapterFlopsPerToken(spec, opts)
  return 3 * forward + recompute
}

/**
 * The attention products' share of `flopsPerToken`: QKᵀ and PV, 4·L·s·d forward, twice that backward, and the
 * forward again when checkpointing recomputes it.
 */
export function attentionFlopsPerToken(spec: ModelSpec, seq: number, gradCheckpointing: boolean): number {
  return attentionForwardFlops(spec, seq) * (gradCheckpointing ? 4 : 3)
}

const attentionForwardFlops = (spec: ModelSpec, seq: number) =>
  4 * spec.layers * seq * spec.heads * spec.headDim

/**
 * The adapters' share of `flopsPerToken`: 2 FLOPs per adapter weight forward, 4 backward (input and weight
 * gradients), 2 more when checkpointing recomputes the forward.
 */
export function adapterFlopsPerToken(spec: ModelSpec, opts: FlopsOptions): number {
  if (!opts.lora) return 0
  const adapters = spec.layers * loraParamsPerLayer(spec, opts.lora)
  return adapters * (6 + (opts.gradCheckpointing ? 2 : 0))
}
