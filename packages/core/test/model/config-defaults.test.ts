import { describe, expect, it } from 'vitest'
import { MODEL_CATALOG } from '../../src/model/catalog.js'
import { CONFIG_DEFAULTS } from '../../src/model/config-defaults.js'
import { traitsOf } from '../../src/model/family-traits.js'
import { modelSpecFromHfConfig } from '../../src/model/hf-config.js'
import type { ModelSpec } from '../../src/schemas/model-spec.js'

type Value = number | boolean

/** The ModelSpec field each config key sets, and the value a key's setting gives it. */
const FIELD_OF: Record<string, [keyof ModelSpec, (value: Value) => unknown]> = {
  vocab_size: ['vocab', (v) => v],
  n_positions: ['maxPositions', (v) => v],
  max_position_embeddings: ['maxPositions', (v) => v],
  max_seq_len: ['maxPositions', (v) => v],
  n_embd: ['hidden', (v) => v],
  d_model: ['hidden', (v) => v],
  hidden_size: ['hidden', (v) => v],
  n_layer: ['layers', (v) => v],
  num_hidden_layers: ['layers', (v) => v],
  n_layers: ['layers', (v) => v],
  n_head: ['heads', (v) => v],
  num_attention_heads: ['heads', (v) => v],
  n_heads: ['heads', (v) => v],
  num_key_value_heads: ['kvHeads', (v) => v],
  multi_query: ['kvHeads', (v) => (v ? 1 : undefined)],
  head_dim: ['headDim', (v) => v],
  intermediate_size: ['ffn', (v) => v],
  ffn_dim: ['ffn', (v) => v],
  attn_pdrop: ['attentionDropout', (v) => v],
  attention_probs_dropout_prob: ['attentionDropout', (v) => v],
  attention_dropout: ['attentionDropout', (v) => v],
  resid_pdrop: ['hiddenDropout', (v) => v],
  hidden_dropout_prob: ['hiddenDropout', (v) => v],
  hidden_dropout: ['hiddenDropout', (v) => v],
  dropout: ['hiddenDropout', (v) => v],
  tie_word_embeddings: ['tiedEmbeddings', (v) => v],
  type_vocab_size: ['typeVocab', (v) => v],
  num_local_experts: ['experts', (v) => expect.objectContaining({ count: v })],
  num_experts_per_tok: ['experts', (v) => expect.objectContaining({ topK: v })],
}

/** A valid config of the type with every defaulted key set to something else. */
function explicit(values: Readonly<Record<string, Value>>): Record<string, Value> {
  const heads = (values.num_attention_heads ?? values.n_head ?? values.n_heads) as number
  const other = (key: string, value: Value): Value => {
    if (typeof value === 'boolean') return !value
    if (/drop/.test(key)) return 0.05
    if (key === 'hidden_size' || key === 'n_embd' || key === 'd_model') return value + heads * 8
    if (key === 'num_attention_heads' || key === 'n_head' || key === 'n_heads') return value * 2
    if (key === 'num_key_value_heads') return Math.max(1, value / 2)
    if (key === 'head_dim') return value / 2
    if (key === 'num_local_experts') return 4
    if (key === 'num_experts_per_tok') return 1
    return key === 'max_position_embeddings' || key === 'n_positions' ? value * 2 : value + 64
  }
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, other(key, value)]))
}

describe("config.json keys omitted take the model type's Transformers defaults", () => {
  for (const [modelType, { values, source }] of Object.entries(CONFIG_DEFAULTS)) {
    it(`${modelType}: each omitted key reads as ${source.split('/').at(-1)} documents it`, () => {
      expect(source).toMatch(/^https:\/\/github\.com\/huggingface\/transformers\/blob\/[0-9a-f]{40}\//)
      const full: Record<string, unknown> = { model_type: modelType, ...explicit(values) }
      const read = (config: Record<string, unknown>) =>
        modelSpecFromHfConfig(config, `${modelType}/config.json`)
      const all = read(full)
      for (const [key, value] of Object.entries(values)) {
        const mapping = FIELD_OF[key]
        if (!mapping) continue
        const [field, expected] = mapping
        const { [key]: _, ...omitted } = full
        const spec = read(omitted)
        const want = expected(value) ?? spec.heads
        expect(spec[field], `${key} omitted`).toEqual(want)
        expect(all[field], `${key} given`).not.toEqual(want)
      }
      // A config of model_type alone is the class's default model.
      const bare = read({ model_type: modelType })
      for (const [key, value] of Object.entries(values)) {
        const mapping = FIELD_OF[key]
        if (mapping) expect(bare[mapping[0]], key).toEqual(mapping[1](value) ?? bare.heads)
      }
    })
  }

  it('gives GPT-2, StarCoder (gpt_bigcode) and BERT 0.1 dropout, as their catalog entries have it', () => {
    for (const type of ['gpt2', 'gpt_bigcode', 'bert']) {
      const spec = modelSpecFromHfConfig({ model_type: type }, 'config.json')
      expect(spec.attentionDropout, type).toBe(0.1)
      expect(spec.hiddenDropout, type).toBe(0.1)
      for (const model of MODEL_CATALOG.filter((m) => m.modelType === type)) {
        expect(model.attentionDropout, model.id).toBe(0.1)
        expect(model.hiddenDropout, model.id).toBe(0.1)
      }
    }
  })

  it("reads Falcon's multi-query default only for the original decoder, as Transformers does", () => {
    const falcon = {
      model_type: 'falcon',
      hidden_size: 8192,
      num_attention_heads: 128,
      num_hidden_layers: 60,
    }
    expect(modelSpecFromHfConfig(falcon, 'config.json').kvHeads).toBe(1)
    const newDecoder = { ...falcon, new_decoder_architecture: true }
    expect(modelSpecFromHfConfig(newDecoder, 'config.json').kvHeads).toBe(128)
    expect(modelSpecFromHfConfig({ ...newDecoder, num_kv_heads: 8 }, 'config.json').kvHeads).toBe(8)
  })

  it("agrees with the type's tied-head trait, and keeps a key the config spells another way", () => {
    for (const [modelType, { values }] of Object.entries(CONFIG_DEFAULTS)) {
      expect(values.tie_word_embeddings, modelType).toBe(traitsOf(modelType)?.tied)
    }
    // GPT-2 written with hidden_size instead of n_embd: the default n_embd does not override it.
    const spec = modelSpecFromHfConfig({ model_type: 'gpt2', hidden_size: 1024, n_head: 16 }, 'config.json')
    expect(spec.hidden).toBe(1024)
    expect(spec.headDim).toBe(64)
  })
})
