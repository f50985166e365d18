import { deepFreeze } from '../deep-freeze.js'

type Json = Record<string, unknown>

/** What a model type's configuration class sets for the keys rigfit reads, and the file that says so. */
export interface ConfigDefaults {
  values: Readonly<Record<string, number | boolean>>
  source: string
}

const TF = 'https://github.com/huggingface/transformers/blob'
const at = (commit: string, type: string) =>
  `${TF}/${commit}/src/transformers/models/${type}/configuration_${type}.py`
const V5 = '008e574391258935f3ecc3035c882e73bbcac419'

/** GPT2Config's defaults, which GPTBigCodeConfig repeats (adding multi-query). */
const GPT2_VALUES = {
  vocab_size: 50257,
  n_positions: 1024,
  n_embd: 768,
  n_layer: 12,
  n_head: 12,
  resid_pdrop: 0.1,
  embd_pdrop: 0.1,
  attn_pdrop: 0.1,
  tie_word_embeddings: true,
}

/** BertConfig's defaults, which RobertaConfig repeats but for its vocabulary. */
const BERT_VALUES = {
  vocab_size: 30522,
  hidden_size: 768,
  num_hidden_layers: 12,
  num_attention_heads: 12,
  intermediate_size: 3072,
  hidden_dropout_prob: 0.1,
  attention_probs_dropout_prob: 0.1,
  max_position_embeddings: 512,
  type_vocab_size: 2,
  tie_word_embeddings: true,
}

/** The decoder defaults Llama's family shares: no dropout, untied head. */
const LLAMA_LIKE = { attention_dropout: 0, tie_word_embeddings: false }

/** MistralConfig's defaults, which MixtralConfig repeats (adding its experts). */
const MISTRAL: ConfigDefaults = {
  values: {
    vocab_size: 32000,
    hidden_size: 4096,
    intermediate_size: 14336,
    num_hidden_layers: 32,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    max_position_embeddings: 4096 * 32,
    ...LLAMA_LIKE,
  },
  source: at('001f85b38fb432858ace93f18622f07cec46d874', 'mistral'),
}

/** OlmoConfig's defaults, which Olmo2Config repeats. */
const OLMO_VALUES = {
  vocab_size: 50304,
  hidden_size: 4096,
  intermediate_size: 11008,
  num_hidden_layers: 32,
  num_attention_heads: 32,
  max_position_embeddings: 2048,
  ...LLAMA_LIKE,
}

/**
 * Transformers' defaults for the config.json keys rigfit reads, per `model_type`: what `from_pretrained` fills in
 * when a config.json omits a key (the configuration class's `__init__` defaults; `tie_word_embeddings` is
 * PretrainedConfig's `True` where the class does not set it). A key whose default is `None` (computed from other
 * keys, such as Llama's key/value heads = the attention heads) is left out: the reader derives it as the class does.
 */
export const CONFIG_DEFAULTS: Readonly<Record<string, ConfigDefaults>> = deepFreeze<
  Record<string, ConfigDefaults>
>({
  gpt2: {
    values: GPT2_VALUES,
    source: at('01ae98ae2414210efd0d9ac1ffe78ff21588f1f7', 'gpt2'),
  },
  gpt_bigcode: {
    values: { ...GPT2_VALUES, multi_query: true },
    source: at('05ff2e98e4461ece6e706435e2a57834bb4f985f', 'gpt_bigcode'),
  },
  bert: {
    values: BERT_VALUES,
    source: at('008f5c8c29be84d4721dc6d1e0fcd72300580be4', 'bert'),
  },
  // RobertaConfig's own defaults: BERT's shapes with RoBERTa's byte-level BPE vocabulary.
  roberta: {
    values: { ...BERT_VALUES, vocab_size: 50265 },
    source: at('008f5c8c29be84d4721dc6d1e0fcd72300580be4', 'roberta'),
  },
  gpt_neox: {
    values: {
      vocab_size: 50432,
      hidden_size: 6144,
      num_hidden_layers: 44,
      num_attention_heads: 64,
      intermediate_size: 24576,
      attention_dropout: 0,
      hidden_dropout: 0,
      max_position_embeddings: 2048,
      tie_word_embeddings: false,
    },
    source: at(V5, 'gpt_neox'),
  },
  llama: {
    values: {
      vocab_size: 32000,
      hidden_size: 4096,
      intermediate_size: 11008,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      max_position_embeddings: 2048,
      ...LLAMA_LIKE,
    },
    source: at(V5, 'llama'),
  },
  mistral: MISTRAL,
  mixtral: {
    values: {
      ...(MISTRAL.values as Record<string, number | boolean>),
      num_local_experts: 8,
      num_experts_per_tok: 2,
    },
    source: at(V5, 'mixtral'),
  },
  qwen2: {
    values: {
      vocab_size: 151936,
      hidden_size: 4096,
      intermediate_size: 22016,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      max_position_embeddings: 32768,
      ...LLAMA_LIKE,
    },
    source: at(V5, 'qwen2'),
  },
  gemma2: {
    values: {
      vocab_size: 256000,
      hidden_size: 2304,
      intermediate_size: 9216,
      num_hidden_layers: 26,
      num_attention_heads: 8,
      num_key_value_heads: 4,
      head_dim: 256,
      max_position_embeddings: 8192,
      attention_dropout: 0,
      tie_word_embeddings: true,
    },
    source: at(V5, 'gemma2'),
  },
  phi: {
    values: {
      vocab_size: 51200,
      hidden_size: 2048,
      intermediate_size: 8192,
      num_hidden_layers: 24,
      num_attention_heads: 32,
      resid_pdrop: 0,
      embd_pdrop: 0,
      max_position_embeddings: 2048,
      ...LLAMA_LIKE,
    },
    source: at(V5, 'phi'),
  },
  phi3: {
    values: {
      vocab_size: 32064,
      hidden_size: 3072,
      intermediate_size: 8192,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      resid_pdrop: 0,
      embd_pdrop: 0,
      max_position_embeddings: 4096,
      ...LLAMA_LIKE,
    },
    source: at(V5, 'phi3'),
  },
  falcon: {
    values: {
      vocab_size: 65024,
      hidden_size: 4544,
      num_hidden_layers: 32,
      num_attention_heads: 71,
      hidden_dropout: 0,
      attention_dropout: 0,
      multi_query: true,
      max_position_embeddings: 2048,
      tie_word_embeddings: true,
    },
    source: at('5fd8edad2a672d6a10d6352b62b823d56c3032bf', 'falcon'),
  },
  mpt: {
    values: {
      d_model: 2048,
      n_heads: 16,
      n_layers: 24,
      max_seq_len: 2048,
      vocab_size: 50368,
      resid_pdrop: 0,
      tie_word_embeddings: true,
    },
    source: at('05699a763e76ee438fa65e6eeae4a294ea0026f5', 'mpt'),
  },
  opt: {
    values: {
      vocab_size: 50272,
      hidden_size: 768,
      num_hidden_layers: 12,
      ffn_dim: 3072,
      max_position_embeddings: 2048,
      dropout: 0.1,
      attention_dropout: 0,
      num_attention_heads: 12,
      tie_word_embeddings: true,
    },
    source: at('1f3ae2b3ac7e5b32262588602ff42efb372a6232', 'opt'),
  },
  starcoder2: {
    values: {
      vocab_size: 49152,
      hidden_size: 3072,
      intermediate_size: 12288,
      num_hidden_layers: 30,
      num_attention_heads: 24,
      num_key_value_heads: 2,
      max_position_embeddings: 4096,
      attention_dropout: 0,
      tie_word_embeddings: true,
    },
    source: at(V5, 'starcoder2'),
  },
  stablelm: {
    values: {
      vocab_size: 50304,
      intermediate_size: 6912,
      hidden_size: 2560,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      max_position_embeddings: 4096,
      hidden_dropout: 0,
      ...LLAMA_LIKE,
    },
    source: at('05cd1ec14dbe16127778060fb68c34105873015c', 'stablelm'),
  },
  olmo: {
    values: OLMO_VALUES,
    source: at(V5, 'olmo'),
  },
  olmo2: {
    values: OLMO_VALUES,
    source: at(V5, 'olmo2'),
  },
  qwen3: {
    values: {
      vocab_size: 151936,
      hidden_size: 4096,
      intermediate_size: 22016,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      head_dim: 128,
      max_position_embeddings: 32768,
      ...LLAMA_LIKE,
    },
    source: at(V5, 'qwen3'),
  },
  gemma: {
    values: {
      vocab_size: 256000,
      hidden_size: 3072,
      intermediate_size: 24576,
      num_hidden_layers: 28,
      num_attention_heads: 16,
      num_key_value_heads: 16,
      head_dim: 256,
      max_position_embeddings: 8192,
      attention_dropout: 0,
      tie_word_embeddings: true,
    },
    source: at(V5, 'gemma'),
  },
  // Gemma3TextConfig lives in Gemma 3's configuration file.
  gemma3_text: {
    values: {
      vocab_size: 262208,
      hidden_size: 2304,
      intermediate_size: 9216,
      num_hidden_layers: 26,
      num_attention_heads: 8,
      num_key_value_heads: 4,
      head_dim: 256,
      max_position_embeddings: 131072,
      attention_dropout: 0,
      tie_word_embeddings: true,
    },
    source: at('008f5c8c29be84d4721dc6d1e0fcd72300580be4', 'gemma3'),
  },
})

/** The documented defaults of a model type; undefined for types rigfit has no table for. */
export function configDefaults(modelType: string): ConfigDefaults | undefined {
  return Object.hasOwn(CONFIG_DEFAULTS, modelType) ? CONFIG_DEFAULTS[modelType] : undefined
}

/**
 * The config with its model type's defaults for the keys it omits, as `from_pretrained` reads it. `aliases` are the
 * groups of names one setting goes by (`hidden_size` / `n_embd`): a default is not added beside a key of its group.
 */
export function withConfigDefaults(
  config: Json,
  modelType: string,
  aliases: readonly (readonly string[])[],
): Json {
  const defaults = configDefaults(modelType)
  if (!defaults) return config
  const given = (key: string) => config[key] !== undefined && config[key] !== null
  const filled: Json = { ...config }
  for (const [key, value] of Object.entries(defaults.values)) {
    const group = aliases.find((names) => names.includes(key)) ?? [key]
    if (!group.some(given)) filled[key] = value
  }
  return filled
}
