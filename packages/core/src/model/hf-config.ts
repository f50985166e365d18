import { RigfitError } from '../errors.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import { withConfigDefaults } from './config-defaults.js'
import { activationOf, SUPPORTED_MODEL_TYPES, type TypeTraits, traitsOf } from './family-traits.js'
import { countParams } from './params.js'
import { assertSaneParameterCount } from './size-bounds.js'
import { nearestSupportedModelType, refuseUnpriceable } from './unpriceable.js'

type Json = Record<string, unknown>

const FIELDS = {
  hidden: ['hidden_size', 'n_embd', 'd_model', 'dim'],
  layers: ['num_hidden_layers', 'n_layer', 'n_layers', 'num_layers'],
  heads: ['num_attention_heads', 'n_head', 'n_heads', 'num_heads'],
  kvHeads: ['num_key_value_heads', 'num_kv_heads', 'n_head_kv', 'multi_query_group_num'],
  ffn: ['intermediate_size', 'n_inner', 'ffn_dim', 'ffn_hidden_size', 'd_ff', 'hidden_dim'],
  vocab: ['vocab_size', 'padded_vocab_size'],
  maxPositions: ['max_position_embeddings', 'n_positions', 'max_seq_len', 'seq_length', 'n_ctx'],
  experts: ['num_local_experts', 'num_experts', 'n_routed_experts'],
  topK: ['num_experts_per_tok', 'moe_top_k', 'top_k'],
  attentionDropout: ['attention_dropout', 'attn_pdrop', 'attention_probs_dropout_prob'],
  hiddenDropout: ['hidden_dropout', 'resid_pdrop', 'hidden_dropout_prob', 'dropout'],
} as const

/** The names one setting goes by, so a default is not added beside the name a config uses. */
const DEFAULT_ALIASES: readonly (readonly string[])[] = [
  ...Object.values(FIELDS),
  ['head_dim', 'kv_channels'],
  ['embd_pdrop', 'emb_pdrop'],
]

/**
 * The largest count a config.json field may hold (layers, widths, heads, vocabulary, positions, experts). Real
 * models are far below it (a vocabulary of 256k, a context of 10M); a value above is a broken file, refused here
 * with the key rather than failing later inside the estimate.
 */
export const MAX_CONFIG_INTEGER = 10_000_000

class ConfigReader {
  constructor(
    private readonly json: Json,
    private readonly source: string,
  ) {}

  fail(field: string, problem: string, suggestion?: string): never {
    throw new RigfitError('input', 'E_MODEL_CONFIG', `${this.source}: field "${field}" ${problem}`, {
      suggestion:
        suggestion ??
        `Check "${field}" against the model's config.json on the Hugging Face Hub, or pick a catalog model (rigfit estimate --model gpt2).`,
      details: { field, source: this.source },
    })
  }

  /** The first of `names` present in the config, with its name. */
  private find(names: readonly string[]): [string, unknown] | undefined {
    for (const name of names) {
      const value = this.json[name]
      if (value !== undefined && value !== null) return [name, value]
    }
    return undefined
  }

  positiveInt(names: readonly string[]): number {
    const found = this.find(names)
    if (!found) this.fail(names[0] as string, `is missing (looked for ${names.join(', ')})`)
    return this.checkInt(found[0], found[1])
  }

  optionalInt(names: readonly string[]): number | undefined {
    const found = this.find(names)
    return found ? this.checkInt(found[0], found[1]) : undefined
  }

  private checkInt(name: string, value: unknown): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_CONFIG_INTEGER) {
      this.fail(
        name,
        `must be a positive integer up to ${MAX_CONFIG_INTEGER.toLocaleString('en-US')}, got ${describeValue(value)}`,
      )
    }
    return value
  }

  /** A positive multiplier such as MPT's expansion_ratio (the MLP width over the hidden size), at most 1,000. */
  ratio(name: string): number {
    const value = this.json[name]
    if (typeof value !== 'number' || !(value > 0 && value <= 1000))
      this.fail(name, `must be a number above 0 and at most 1000, got ${describeValue(value)}`)
    return value
  }

  /** A count computed from `name` (a ratio times a width): whole and within the same bound as a count given. */
  derivedInt(name: string, value: number): number {
    const rounded = Math.round(value)
    if (!(rounded >= 1 && rounded <= MAX_CONFIG_INTEGER))
      this.fail(name, `gives ${rounded}, outside 1 to ${MAX_CONFIG_INTEGER.toLocaleString('en-US')}`)
    return rounded
  }

  probability(names: readonly string[]): number {
    const found = this.find(names)
    if (!found) return 0
    const [name, value] = found
    if (typeof value !== 'number' || value < 0 || value > 1)
      this.fail(name, `must be a number from 0 to 1, got ${describeValue(value)}`)
    return value
  }

  flag(name: string): boolean | undefined {
    const value = this.json[name]
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'boolean') this.fail(name, `must be true or false, got ${JSON.stringify(value)}`)
    return value
  }

  string(name: string): string | undefined {
    const value = this.json[name]
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'string') this.fail(name, `must be a string, got ${JSON.stringify(value)}`)
    return value
  }

  has(name: string): boolean {
    return this.json[name] !== undefined && this.json[name] !== null
  }

  object(name: string): Json | undefined {
    const value = this.json[name]
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined
  }
}

/** The activation a config names, under any of the field names model types use. */
function activationName(reader: ConfigReader): string | undefined {
  return (
    reader.string('hidden_act') ?? reader.string('hidden_activation') ?? reader.string('activation_function')
  )
}

/** Traits of a model type rigfit does not know, read from the fields every config carries. */
function inferTraits(reader: ConfigReader, modelType: string): TypeTraits {
  const act = activationName(reader)
  if (act === undefined) {
    reader.fail(
      'hidden_act',
      `is missing and model_type "${modelType}" is not one rigfit knows, so the MLP kind cannot be told`,
      `The nearest supported model type is "${nearestSupportedModelType(modelType)}"; add "hidden_act" to the config, or use one of the known model types: ${SUPPORTED_MODEL_TYPES.join(', ')}.`,
    )
  }
  const norm = reader.has('rms_norm_eps')
    ? 'rmsnorm'
    : reader.has('layer_norm_eps') || reader.has('layer_norm_epsilon')
      ? 'layernorm'
      : undefined
  if (norm === undefined) {
    reader.fail(
      'rms_norm_eps',
      `(or "layer_norm_eps") is missing and model_type "${modelType}" is not one rigfit knows, so the norm kind cannot be told`,
      `The nearest supported model type is "${nearestSupportedModelType(modelType)}"; add "rms_norm_eps" or "layer_norm_eps" to the config if the model has that layout.`,
    )
  }
  const rope =
    reader.has('rope_theta') ||
    reader.has('rotary_pct') ||
    reader.has('rope_scaling') ||
    reader.has('partial_rotary_factor')
  return {
    kind: reader.flag('is_decoder') === false ? 'encoder' : 'decoder',
    mlp: /silu|swish/.test(act) ? 'swiglu' : 'gelu',
    norm,
    positions: rope ? 'rope' : 'learned',
    bias: 'none',
    tied: true,
  }
}

/** Which linear layers carry biases: the family default unless the config's own flags say otherwise. */
function biasOf(reader: ConfigReader, modelType: string, fallback: ModelSpec['bias']): ModelSpec['bias'] {
  if (modelType === 'mpt') return reader.flag('no_bias') === false ? 'all' : 'none'
  const all = reader.flag('bias') ?? reader.flag('use_bias')
  if (all !== undefined) return all ? 'all' : 'none'
  if (reader.flag('attention_bias') === true && fallback === 'none') return 'qkv'
  return fallback
}

/**
 * A ModelSpec from a Hugging Face config.json object. Field names differ by model_type (n_embd / hidden_size,
 * n_layer / num_hidden_layers, n_inner / intermediate_size, multi_query, num_local_experts, ...); a missing or
 * unusable field is a RigfitError naming it. `source` names the file in messages and becomes the spec's id.
 */
export function modelSpecFromHfConfig(json: unknown, source: string): ModelSpec {
  const { reader, modelType } = defaultedReader(json, source)
  const traits = traitsOf(modelType) ?? inferTraits(reader, modelType)
  const attention = attentionShape(reader)
  const { hidden } = attention
  const ratio = reader.has('expansion_ratio') ? reader.ratio('expansion_ratio') : traits.ffnRatio
  const ffn =
    reader.optionalInt(FIELDS.ffn) ??
    (ratio === undefined
      ? reader.positiveInt(FIELDS.ffn)
      : reader.derivedInt('expansion_ratio', ratio * hidden))
  const experts = expertsOf(reader)
  const attnConfig = reader.object('attn_config')
  const positions: ModelSpec['positions'] =
    attnConfig?.alibi === true || reader.flag('alibi') === true ? 'alibi' : traits.positions
  const tied = reader.flag('tie_word_embeddings') ?? traits.tied
  const bias = biasOf(reader, modelType, traits.bias)

  const name = reader.string('_name_or_path') || source
  const spec: ModelSpec = {
    schemaVersion: 1,
    id: source,
    name,
    source: 'config',
    modelType,
    kind: traits.kind,
    layers: attention.layers,
    hidden,
    heads: attention.heads,
    kvHeads: attention.kvHeads,
    headDim: attention.headDim,
    ffn,
    vocab: reader.positiveInt(FIELDS.vocab),
    maxPositions: reader.positiveInt(FIELDS.maxPositions),
    mlp: traits.mlp,
    activation: activationOf(activationName(reader), traits),
    norm: traits.norm,
    positions,
    tiedEmbeddings: tied,
    bias,
    experts,
    typeVocab: traits.kind === 'encoder' ? (reader.optionalInt(['type_vocab_size']) ?? 0) : 0,
    attentionDropout:
      attnConfig && typeof attnConfig.attn_pdrop === 'number'
        ? attnConfig.attn_pdrop
        : reader.probability(FIELDS.attentionDropout),
    hiddenDropout: reader.probability(FIELDS.hiddenDropout),
  }
  assertSaneParameterCount(countParams(spec).total, source)
  return spec
}

/** A config value as a message shows it: JSON would print a number too large for a double (1e400) as null. */
function describeValue(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value))
    return 'a number too large to represent (JSON numbers of 1e309 and above read as infinity)'
  return JSON.stringify(value)
}

/**
 * A reader of the config's language model (a multimodal wrapper's text_config), with the Transformers defaults
 * of its model_type for the keys it omits; a config without model_type, or of a type rigfit cannot price, is
 * refused.
 */
function defaultedReader(json: unknown, source: string): { reader: ConfigReader; modelType: string } {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new RigfitError('input', 'E_MODEL_CONFIG', `${source}: a model config must be a JSON object`, {
      suggestion: 'Pass the config.json of a Hugging Face model (the file next to its weights).',
    })
  }
  let config = json as Json
  // Multimodal wrappers (Gemma 3, LLaVA, ...) keep the language model's numbers in text_config.
  const text = new ConfigReader(config, source).object('text_config')
  if (text && !FIELDS.hidden.some((name) => name in config))
    config = { ...text, model_type: text.model_type ?? config.model_type }
  const reader: ConfigReader = new ConfigReader(config, source)

  const modelType = reader.string('model_type')
  if (modelType === undefined) {
    reader.fail(
      'model_type',
      'is missing',
      `Add "model_type" (one of ${SUPPORTED_MODEL_TYPES.join(', ')}) to the config.`,
    )
  }
  refuseUnpriceable(config, modelType, source)
  // Keys the file omits take the model type's Transformers defaults, as from_pretrained reads them.
  return {
    reader: new ConfigReader(withConfigDefaults(config, modelType, DEFAULT_ALIASES), source),
    modelType,
  }
}

/** Layers, width and attention heads: query heads divide the width (or a head_dim is given), key/value heads them. */
function attentionShape(reader: ConfigReader) {
  const hidden = reader.positiveInt(FIELDS.hidden)
  const layers = reader.positiveInt(FIELDS.layers)
  const heads = reader.positiveInt(FIELDS.heads)
  const explicitHeadDim = reader.optionalInt(['head_dim', 'kv_channels'])
  if (explicitHeadDim === undefined && hidden % heads !== 0) {
    reader.fail(
      FIELDS.heads.find((n) => reader.has(n)) ?? 'num_attention_heads',
      `(${heads}) does not divide the hidden size ${hidden} and no "head_dim" is given`,
    )
  }
  const headDim = explicitHeadDim ?? hidden / heads

  // gpt_bigcode and Falcon-7B say `multi_query: true` instead of giving a key/value head count; Falcon's new decoder
  // architecture (40B, 180B) ignores it.
  const multiQuery = reader.flag('multi_query') === true && reader.flag('new_decoder_architecture') !== true
  const kvHeads = reader.optionalInt(FIELDS.kvHeads) ?? (multiQuery ? 1 : heads)
  if (heads % kvHeads !== 0)
    reader.fail('num_key_value_heads', `(${kvHeads}) must divide num_attention_heads (${heads})`)
  return { hidden, layers, heads, headDim, kvHeads }
}

/** A mixture of experts: the expert count and how many each token uses; null for a dense model. */
function expertsOf(reader: ConfigReader): ModelSpec['experts'] {
  const expertCount = reader.optionalInt(FIELDS.experts)
  if (expertCount === undefined || expertCount <= 1) return null
  const topK = reader.positiveInt(FIELDS.topK)
  if (topK > expertCount)
    reader.fail('num_experts_per_tok', `(${topK}) exceeds the number of experts (${expertCount})`)
  return { count: expertCount, topK }
}
