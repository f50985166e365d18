import { z } from 'zod'

export const MODEL_SPEC_SCHEMA_VERSION = 1

/**
 * Where a model read from the Hugging Face Hub came from: the repository, the revision asked for, and the commit
 * the files were read at (so a trainer can load exactly those weights). Never a token or an endpoint URL.
 */
export const HubRef = z.object({
  /** `org/name` on the Hub. */
  repo: z.string(),
  /** The revision asked for: `main` unless `--model org/name@revision` named a branch, tag or commit. */
  revision: z.string(),
  /** The commit the config was read at (the Hub's X-Repo-Commit, or the cache's snapshot folder); null when the mirror did not say. */
  commit: z.string().nullable(),
  /** Where the config was read: the local Hugging Face cache, rigfit's own cache, or the Hub. */
  from: z.enum(['hf-cache', 'rigfit-cache', 'hub']),
})
export type HubRef = z.infer<typeof HubRef>

/** What the weights' safetensors headers (or their index) say, next to what the config implies. */
export const ModelWeights = z.object({
  /** Parameters stored in the weights: counted from the headers, or the index's byte total over the stored dtype. */
  params: z.number().int().nonnegative(),
  /** Parameters the config's architecture implies (countParams). */
  configParams: z.number().int().nonnegative(),
  /** The two agree within 1%. */
  agrees: z.boolean(),
  /** The safetensors dtype holding most of the parameters (BF16, F16, F32, ...). */
  dtype: z.string(),
  /** Bytes of tensor data. */
  bytes: z.number().int().nonnegative(),
  /** headers: every shard's header read; index: model.safetensors.index.json's total only. */
  from: z.enum(['headers', 'index']),
  files: z.number().int().positive(),
})
export type ModelWeights = z.infer<typeof ModelWeights>

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
  /**
   * How the model's own code computes a GELU MLP's activation: `fused` is one kernel (F.gelu, Transformers'
   * `gelu` and `gelu_pytorch_tanh`); `gelu-new` and `gelu-fast` are Transformers' tanh approximations written as
   * Python expressions (GPT-2's and Phi's `gelu_new`), eight or nine element-wise ops that keep four or seven
   * tensors of the MLP's width for backward. Whether that code runs is the stack's (`pythonActivations`).
   */
  activation: z.enum(['fused', 'gelu-new', 'gelu-fast']).default('fused'),
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
  /** Set when the model was read from the Hugging Face Hub (or its cache): repository, revision and commit. */
  hub: HubRef.optional(),
  /** Set when a local model folder holds safetensors weights: their exact parameter count and stored dtype. */
  weights: ModelWeights.optional(),
})
export type ModelSpec = z.infer<typeof ModelSpec>
