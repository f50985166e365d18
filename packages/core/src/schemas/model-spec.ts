import { z } from 'zod'

export const MODEL_SPEC_SCHEMA_VERSION = 1

export const ModelSpec = z.object({
  schemaVersion: z.literal(MODEL_SPEC_SCHEMA_VERSION),
  /** Catalog id, config path, or a generated name such as `gpt-124m`. */
  id: z.string(),
  name: z.string(),
  source: z.enum(['catalog', 'config', 'generated']),
  /** Hugging Face `model_type` where known (gpt2, llama, mistral, mixtral, qwen2, gemma2, phi3, gpt_bigcode, gpt_neox, bert, ...). */
  modelType: z.string(),
  kind: z.enum(['decoder', 'encoder']),
  layers: z.number().int().positive(),
  hidden: z.number().int().positive(),
  heads: z.number().int().positive(),
  /** Key/value heads: equal to `heads` for multi-head, 1 for multi-query, in between for grouped-query attention. */
  kvHeads: z.number().int().positive(),
  headDim: z.number().int().positive(),
  /** MLP inner width (per expert for mixture-of-experts). */
  ffn: z.number().int().positive(),
  vocab: z.number().int().positive(),
  maxPositions: z.number().int().positive(),
  mlp: z.enum(['gelu', 'swiglu', 'geglu']),
  norm: z.enum(['layernorm', 'rmsnorm']),
  positions: z.enum(['learned', 'rope', 'alibi']),
  tiedEmbeddings: z.boolean(),
  /** Linear layers carry biases (GPT-2, BERT, Pythia, Qwen's qkv). */
  bias: z.enum(['none', 'qkv', 'all']),
  experts: z.object({ count: z.number().int().positive(), topK: z.number().int().positive() }).nullable(),
  /** Token-type embeddings and pooler (BERT). */
  typeVocab: z.number().int().nonnegative(),
  /** Dropout on attention probabilities in training (GPT-2 and BERT: 0.1); it keeps a mask per score. */
  attentionDropout: z.number().min(0).max(1).default(0),
  /** Dropout on the residual branches and embeddings in training; it keeps a mask per hidden value. */
  hiddenDropout: z.number().min(0).max(1).default(0),
})
export type ModelSpec = z.infer<typeof ModelSpec>
