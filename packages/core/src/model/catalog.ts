import type { ModelSpec } from '../schemas/model-spec.js'

/** Architecture traits shared by a model family; the sizes come per model. */
interface FamilyTraits {
  modelType: string
  kind: ModelSpec['kind']
  mlp: ModelSpec['mlp']
  norm: ModelSpec['norm']
  positions: ModelSpec['positions']
  bias: ModelSpec['bias']
  attentionDropout: number
  hiddenDropout: number
}

interface Sizes {
  layers: number
  hidden: number
  heads: number
  kvHeads?: number
  headDim?: number
  ffn: number
  vocab: number
  maxPositions: number
  tiedEmbeddings: boolean
  experts?: { count: number; topK: number }
  typeVocab?: number
}

const GPT2: FamilyTraits = {
  modelType: 'gpt2',
  kind: 'decoder',
  mlp: 'gelu',
  norm: 'layernorm',
  positions: 'learned',
  bias: 'all',
  attentionDropout: 0.1,
  hiddenDropout: 0.1,
}
const NEOX: FamilyTraits = {
  ...GPT2,
  modelType: 'gpt_neox',
  positions: 'rope',
  attentionDropout: 0,
  hiddenDropout: 0,
}
const LLAMA: FamilyTraits = {
  modelType: 'llama',
  kind: 'decoder',
  mlp: 'swiglu',
  norm: 'rmsnorm',
  positions: 'rope',
  bias: 'none',
  attentionDropout: 0,
  hiddenDropout: 0,
}
const MISTRAL: FamilyTraits = { ...LLAMA, modelType: 'mistral' }
const MIXTRAL: FamilyTraits = { ...LLAMA, modelType: 'mixtral' }
const QWEN2: FamilyTraits = { ...LLAMA, modelType: 'qwen2', bias: 'qkv' }
const GEMMA2: FamilyTraits = { ...LLAMA, modelType: 'gemma2', mlp: 'geglu' }
const PHI: FamilyTraits = { ...NEOX, modelType: 'phi', hiddenDropout: 0.1 }
const PHI3: FamilyTraits = { ...LLAMA, modelType: 'phi3' }
const BIGCODE: FamilyTraits = { ...GPT2, modelType: 'gpt_bigcode' }
const BERT: FamilyTraits = { ...GPT2, modelType: 'bert', kind: 'encoder' }

function define(id: string, hfId: string, traits: FamilyTraits, sizes: Sizes): ModelSpec {
  const headDim = sizes.headDim ?? sizes.hidden / sizes.heads
  return {
    schemaVersion: 1,
    id,
    name: hfId,
    source: 'catalog',
    modelType: traits.modelType,
    kind: traits.kind,
    layers: sizes.layers,
    hidden: sizes.hidden,
    heads: sizes.heads,
    kvHeads: sizes.kvHeads ?? sizes.heads,
    headDim,
    ffn: sizes.ffn,
    vocab: sizes.vocab,
    maxPositions: sizes.maxPositions,
    mlp: traits.mlp,
    norm: traits.norm,
    positions: traits.positions,
    tiedEmbeddings: sizes.tiedEmbeddings,
    bias: traits.bias,
    experts: sizes.experts ?? null,
    typeVocab: sizes.typeVocab ?? 0,
    attentionDropout: traits.attentionDropout,
    hiddenDropout: traits.hiddenDropout,
  }
}

const gpt2 = (layers: number, hidden: number, heads: number): Sizes => ({
  layers,
  hidden,
  heads,
  ffn: 4 * hidden,
  vocab: 50257,
  maxPositions: 1024,
  tiedEmbeddings: true,
})
const pythia = (layers: number, hidden: number, heads: number, vocab = 50304): Sizes => ({
  layers,
  hidden,
  heads,
  ffn: 4 * hidden,
  vocab,
  maxPositions: 2048,
  tiedEmbeddings: false,
})

/**
 * Built-in models with the numbers of their published config.json (Hugging Face Hub, `name` is the repository).
 * Sizes only: weights are never needed to estimate memory or speed.
 */
export const MODEL_CATALOG: readonly ModelSpec[] = Object.freeze([
  define('gpt2', 'openai-community/gpt2', GPT2, gpt2(12, 768, 12)),
  define('gpt2-medium', 'openai-community/gpt2-medium', GPT2, gpt2(24, 1024, 16)),
  define('gpt2-large', 'openai-community/gpt2-large', GPT2, gpt2(36, 1280, 20)),
  define('gpt2-xl', 'openai-community/gpt2-xl', GPT2, gpt2(48, 1600, 25)),
  define('pythia-70m', 'EleutherAI/pythia-70m', NEOX, pythia(6, 512, 8)),
  define('pythia-160m', 'EleutherAI/pythia-160m', NEOX, pythia(12, 768, 12)),
  define('pythia-410m', 'EleutherAI/pythia-410m', NEOX, pythia(24, 1024, 16)),
  define('pythia-1b', 'EleutherAI/pythia-1b', NEOX, pythia(16, 2048, 8)),
  define('pythia-1.4b', 'EleutherAI/pythia-1.4b', NEOX, pythia(24, 2048, 16)),
  define('pythia-2.8b', 'EleutherAI/pythia-2.8b', NEOX, pythia(32, 2560, 32)),
  define('pythia-6.9b', 'EleutherAI/pythia-6.9b', NEOX, pythia(32, 4096, 32, 50432)),
  define('pythia-12b', 'EleutherAI/pythia-12b', NEOX, pythia(36, 5120, 40, 50688)),
  define('llama-2-7b', 'meta-llama/Llama-2-7b-hf', LLAMA, {
    layers: 32,
    hidden: 4096,
    heads: 32,
    ffn: 11008,
    vocab: 32000,
    maxPositions: 4096,
    tiedEmbeddings: false,
  }),
  define('llama-2-13b', 'meta-llama/Llama-2-13b-hf', LLAMA, {
    layers: 40,
    hidden: 5120,
    heads: 40,
    ffn: 13824,
    vocab: 32000,
    maxPositions: 4096,
    tiedEmbeddings: false,
  }),
  define('llama-2-70b', 'meta-llama/Llama-2-70b-hf', LLAMA, {
    layers: 80,
    hidden: 8192,
    heads: 64,
    kvHeads: 8,
    ffn: 28672,
    vocab: 32000,
    maxPositions: 4096,
    tiedEmbeddings: false,
  }),
  define('llama-3-8b', 'meta-llama/Meta-Llama-3-8B', LLAMA, {
    layers: 32,
    hidden: 4096,
    heads: 32,
    kvHeads: 8,
    ffn: 14336,
    vocab: 128256,
    maxPositions: 8192,
    tiedEmbeddings: false,
  }),
  define('llama-3-70b', 'meta-llama/Meta-Llama-3-70B', LLAMA, {
    layers: 80,
    hidden: 8192,
    heads: 64,
    kvHeads: 8,
    ffn: 28672,
    vocab: 128256,
    maxPositions: 8192,
    tiedEmbeddings: false,
  }),
  define('llama-3.1-8b', 'meta-llama/Llama-3.1-8B', LLAMA, {
    layers: 32,
    hidden: 4096,
    heads: 32,
    kvHeads: 8,
    ffn: 14336,
    vocab: 128256,
    maxPositions: 131072,
    tiedEmbeddings: false,
  }),
  define('llama-3.1-70b', 'meta-llama/Llama-3.1-70B', LLAMA, {
    layers: 80,
    hidden: 8192,
    heads: 64,
    kvHeads: 8,
    ffn: 28672,
    vocab: 128256,
    maxPositions: 131072,
    tiedEmbeddings: false,
  }),
  define('llama-3.2-1b', 'meta-llama/Llama-3.2-1B', LLAMA, {
    layers: 16,
    hidden: 2048,
    heads: 32,
    kvHeads: 8,
    headDim: 64,
    ffn: 8192,
    vocab: 128256,
    maxPositions: 131072,
    tiedEmbeddings: true,
  }),
  define('llama-3.2-3b', 'meta-llama/Llama-3.2-3B', LLAMA, {
    layers: 28,
    hidden: 3072,
    heads: 24,
    kvHeads: 8,
    headDim: 128,
    ffn: 8192,
    vocab: 128256,
    maxPositions: 131072,
    tiedEmbeddings: true,
  }),
  define('tinyllama-1.1b', 'TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T', LLAMA, {
    layers: 22,
    hidden: 2048,
    heads: 32,
    kvHeads: 4,
    ffn: 5632,
    vocab: 32000,
    maxPositions: 2048,
    tiedEmbeddings: false,
  }),
  define('mistral-7b', 'mistralai/Mistral-7B-v0.1', MISTRAL, {
    layers: 32,
    hidden: 4096,
    heads: 32,
    kvHeads: 8,
    ffn: 14336,
    vocab: 32000,
    maxPositions: 32768,
    tiedEmbeddings: false,
  }),
  define('mixtral-8x7b', 'mistralai/Mixtral-8x7B-v0.1', MIXTRAL, {
    layers: 32,
    hidden: 4096,
    heads: 32,
    kvHeads: 8,
    ffn: 14336,
    vocab: 32000,
    maxPositions: 32768,
    tiedEmbeddings: false,
    experts: { count: 8, topK: 2 },
  }),
  define('qwen2.5-0.5b', 'Qwen/Qwen2.5-0.5B', QWEN2, {
    layers: 24,
    hidden: 896,
    heads: 14,
    kvHeads: 2,
    ffn: 4864,
    vocab: 151936,
    maxPositions: 32768,
    tiedEmbeddings: true,
  }),
  define('qwen2.5-1.5b', 'Qwen/Qwen2.5-1.5B', QWEN2, {
    layers: 28,
    hidden: 1536,
    heads: 12,
    kvHeads: 2,
    ffn: 8960,
    vocab: 151936,
    maxPositions: 131072,
    tiedEmbeddings: true,
  }),
  define('qwen2.5-3b', 'Qwen/Qwen2.5-3B', QWEN2, {
    layers: 36,
    hidden: 2048,
    heads: 16,
    kvHeads: 2,
    ffn: 11008,
    vocab: 151936,
    maxPositions: 32768,
    tiedEmbeddings: true,
  }),
  define('qwen2.5-7b', 'Qwen/Qwen2.5-7B', QWEN2, {
    layers: 28,
    hidden: 3584,
    heads: 28,
    kvHeads: 4,
    ffn: 18944,
    vocab: 152064,
    maxPositions: 131072,
    tiedEmbeddings: false,
  }),
  define('qwen2.5-14b', 'Qwen/Qwen2.5-14B', QWEN2, {
    layers: 48,
    hidden: 5120,
    heads: 40,
    kvHeads: 8,
    ffn: 13824,
    vocab: 152064,
    maxPositions: 131072,
    tiedEmbeddings: false,
  }),
  define('qwen2.5-32b', 'Qwen/Qwen2.5-32B', QWEN2, {
    layers: 64,
    hidden: 5120,
    heads: 40,
    kvHeads: 8,
    ffn: 27648,
    vocab: 152064,
    maxPositions: 131072,
    tiedEmbeddings: false,
  }),
  define('qwen2.5-72b', 'Qwen/Qwen2.5-72B', QWEN2, {
    layers: 80,
    hidden: 8192,
    heads: 64,
    kvHeads: 8,
    ffn: 29568,
    vocab: 152064,
    maxPositions: 131072,
    tiedEmbeddings: false,
  }),
  define('gemma-2-2b', 'google/gemma-2-2b', GEMMA2, {
    layers: 26,
    hidden: 2304,
    heads: 8,
    kvHeads: 4,
    headDim: 256,
    ffn: 9216,
    vocab: 256000,
    maxPositions: 8192,
    tiedEmbeddings: true,
  }),
  define('gemma-2-9b', 'google/gemma-2-9b', GEMMA2, {
    layers: 42,
    hidden: 3584,
    heads: 16,
    kvHeads: 8,
    headDim: 256,
    ffn: 14336,
    vocab: 256000,
    maxPositions: 8192,
    tiedEmbeddings: true,
  }),
  define('gemma-2-27b', 'google/gemma-2-27b', GEMMA2, {
    layers: 46,
    hidden: 4608,
    heads: 32,
    kvHeads: 16,
    headDim: 128,
    ffn: 36864,
    vocab: 256000,
    maxPositions: 8192,
    tiedEmbeddings: true,
  }),
  define('phi-1.5', 'microsoft/phi-1_5', PHI, {
    layers: 24,
    hidden: 2048,
    heads: 32,
    ffn: 8192,
    vocab: 51200,
    maxPositions: 2048,
    tiedEmbeddings: false,
  }),
  define('phi-2', 'microsoft/phi-2', PHI, {
    layers: 32,
    hidden: 2560,
    heads: 32,
    ffn: 10240,
    vocab: 51200,
    maxPositions: 2048,
    tiedEmbeddings: false,
  }),
  define('phi-3-mini', 'microsoft/Phi-3-mini-4k-instruct', PHI3, {
    layers: 32,
    hidden: 3072,
    heads: 32,
    ffn: 8192,
    vocab: 32064,
    maxPositions: 4096,
    tiedEmbeddings: false,
  }),
  define('smollm-135m', 'HuggingFaceTB/SmolLM-135M', LLAMA, {
    layers: 30,
    hidden: 576,
    heads: 9,
    kvHeads: 3,
    ffn: 1536,
    vocab: 49152,
    maxPositions: 2048,
    tiedEmbeddings: true,
  }),
  define('smollm-360m', 'HuggingFaceTB/SmolLM-360M', LLAMA, {
    layers: 32,
    hidden: 960,
    heads: 15,
    kvHeads: 5,
    ffn: 2560,
    vocab: 49152,
    maxPositions: 2048,
    tiedEmbeddings: true,
  }),
  define('smollm-1.7b', 'HuggingFaceTB/SmolLM-1.7B', LLAMA, {
    layers: 24,
    hidden: 2048,
    heads: 32,
    ffn: 8192,
    vocab: 49152,
    maxPositions: 2048,
    tiedEmbeddings: true,
  }),
  define('starcoderbase-1b', 'bigcode/starcoderbase-1b', BIGCODE, {
    layers: 24,
    hidden: 2048,
    heads: 16,
    kvHeads: 1,
    ffn: 8192,
    vocab: 49152,
    maxPositions: 8192,
    tiedEmbeddings: true,
  }),
  define('bert-base-uncased', 'google-bert/bert-base-uncased', BERT, {
    layers: 12,
    hidden: 768,
    heads: 12,
    ffn: 3072,
    vocab: 30522,
    maxPositions: 512,
    tiedEmbeddings: true,
    typeVocab: 2,
  }),
  define('bert-large-uncased', 'google-bert/bert-large-uncased', BERT, {
    layers: 24,
    hidden: 1024,
    heads: 16,
    ffn: 4096,
    vocab: 30522,
    maxPositions: 512,
    tiedEmbeddings: true,
    typeVocab: 2,
  }),
])

/** Every catalog model, in catalog order. */
export function listModels(): readonly ModelSpec[] {
  return MODEL_CATALOG
}

/** A catalog model by id or Hugging Face repository id, case-insensitively; undefined when none matches. */
export function findCatalogModel(idOrRepo: string): ModelSpec | undefined {
  const wanted = idOrRepo.trim().toLowerCase()
  const bare = wanted.includes('/') ? wanted.slice(wanted.lastIndexOf('/') + 1) : wanted
  return (
    MODEL_CATALOG.find((m) => m.id === wanted || m.name.toLowerCase() === wanted) ??
    MODEL_CATALOG.find((m) => m.name.toLowerCase().endsWith(`/${bare}`))
  )
}
