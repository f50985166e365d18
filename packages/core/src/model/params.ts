import type { LoraSpec } from '../schemas/estimate.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import { distinctTargets, loraCopies, loraInWidth, loraOutWidth } from './lora-shapes.js'

/** Parameter counts of a model's parts, in elements. */
export interface ModelParts {
  /** Token, position and token-type embeddings. */
  embedding: number
  /** The output head when it is not tied to the token embedding. */
  head: number
  /** One transformer block, every expert included. */
  layer: number
  /** One block as a token sees it: attention, norms and the top-k experts. */
  layerActive: number
  /** Weight elements of one block's linear layers (what quantisation applies to), every expert included. */
  layerLinear: number
  /** Final norm, embedding norm and pooler. */
  extra: number
  /** The largest single parameter tensor (an embedding or an MLP projection), in elements. */
  largestTensor: number
  total: number
}

export interface ParamCounts {
  total: number
  trainable: number
  /** Token (and position) embeddings plus an untied output head. */
  embedding: number
  /** One transformer block. */
  perLayer: number
}

/** Adapter parameters LoRA adds to one block: rank x (in + out) for each wrapped linear layer. */
export function loraParamsPerLayer(spec: ModelSpec, lora: Pick<LoraSpec, 'rank' | 'targets'>): number {
  let count = 0
  for (const target of distinctTargets(lora.targets))
    count += lora.rank * (loraInWidth(spec, target) + loraOutWidth(spec, target)) * loraCopies(spec, target)
  return count
}

/** Counts every parameter tensor the architecture defines (the Hugging Face implementation of each family). */
export function modelParts(spec: ModelSpec): ModelParts {
  const h = spec.hidden
  const q = spec.heads * spec.headDim
  const kv = spec.kvHeads * spec.headDim
  const f = spec.ffn
  const normSize = spec.norm === 'layernorm' ? 2 * h : h
  const attnBias = spec.bias === 'none' ? 0 : q + 2 * kv + (spec.bias === 'all' ? h : 0)
  const attnWeights = h * q + 2 * h * kv + q * h
  const gated = spec.mlp !== 'gelu'
  const expertWeights = (gated ? 3 : 2) * h * f
  const expertBias = spec.bias === 'all' ? (gated ? 2 * f : f) + h : 0
  const experts = spec.experts?.count ?? 1
  const topK = spec.experts ? spec.experts.topK : 1
  const router = spec.experts ? h * experts : 0
  const expert = expertWeights + expertBias
  const shared = attnWeights + attnBias + 2 * normSize + router
  const layer = shared + experts * expert
  const layerActive = shared + topK * expert
  const layerLinear = attnWeights + experts * expertWeights

  const tokenEmbedding = spec.vocab * h
  const embedding =
    tokenEmbedding + (spec.positions === 'learned' ? spec.maxPositions * h : 0) + spec.typeVocab * h
  const head = spec.tiedEmbeddings ? 0 : spec.vocab * h
  // Decoders end with a final norm; BERT-style encoders normalise the embeddings and add a pooler.
  const extra = spec.kind === 'encoder' ? normSize + h * h + h : normSize
  const total = embedding + head + spec.layers * layer + extra
  const largestTensor = Math.max(tokenEmbedding, h * f, h * q)
  return { embedding, head, layer, layerActive, layerLinear, extra, largestTensor, total }
}

/**
 * Parameters of a model from its architecture: `total` includes LoRA adapters when given, and `trainable` is
 * then only the adapters (a frozen base has no gradients and no optimizer states).
 */
export function countParams(spec: ModelSpec, lora?: Pick<LoraSpec, 'rank' | 'targets'> | null): ParamCounts {
  const parts = modelParts(spec)
  const adapters = lora ? spec.layers * loraParamsPerLayer(spec, lora) : 0
  return {
    total: parts.total + adapters,
    trainable: lora ? adapters : parts.total,
    embedding: parts.embedding + parts.head,
    perLayer: parts.layer,
  }
}
