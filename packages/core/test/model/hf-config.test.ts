import { describe, expect, it } from 'vitest'
import { isRigfitError, type RigfitError } from '../../src/errors.js'
import { modelSpecFromHfConfig } from '../../src/model/hf-config.js'
import { countParams } from '../../src/model/params.js'

function failure(json: unknown): RigfitError {
  try {
    modelSpecFromHfConfig(json, 'config.json')
  } catch (error) {
    if (isRigfitError(error)) return error
    throw error
  }
  throw new Error('expected a RigfitError')
}

// Excerpts of the published config.json files (only the fields rigfit reads, plus a few it ignores).
const GPT2 = {
  model_type: 'gpt2',
  n_embd: 768,
  n_layer: 12,
  n_head: 12,
  n_inner: null,
  vocab_size: 50257,
  n_positions: 1024,
  attn_pdrop: 0.1,
  resid_pdrop: 0.1,
  activation_function: 'gelu_new',
}
const LLAMA2_7B = {
  model_type: 'llama',
  hidden_size: 4096,
  num_hidden_layers: 32,
  num_attention_heads: 32,
  num_key_value_heads: 32,
  intermediate_size: 11008,
  vocab_size: 32000,
  max_position_embeddings: 4096,
  hidden_act: 'silu',
  rms_norm_eps: 1e-5,
  tie_word_embeddings: false,
}
const MIXTRAL = {
  ...LLAMA2_7B,
  model_type: 'mixtral',
  num_key_value_heads: 8,
  intermediate_size: 14336,
  max_position_embeddings: 32768,
  num_local_experts: 8,
  num_experts_per_tok: 2,
}
const STARCODER = {
  model_type: 'gpt_bigcode',
  n_embd: 2048,
  n_layer: 24,
  n_head: 16,
  n_inner: 8192,
  multi_query: true,
  vocab_size: 49152,
  n_positions: 8192,
}
const BERT = {
  model_type: 'bert',
  hidden_size: 768,
  num_hidden_layers: 12,
  num_attention_heads: 12,
  intermediate_size: 3072,
  vocab_size: 30522,
  max_position_embeddings: 512,
  type_vocab_size: 2,
  hidden_dropout_prob: 0.1,
  attention_probs_dropout_prob: 0.1,
}

describe('modelSpecFromHfConfig', () => {
  it('reads GPT-2 field names and defaults the MLP to 4x', () => {
    const spec = modelSpecFromHfConfig(GPT2, 'gpt2/config.json')
    expect(spec).toMatchObject({
      hidden: 768,
      layers: 12,
      heads: 12,
      kvHeads: 12,
      ffn: 3072,
      mlp: 'gelu',
      positions: 'learned',
      tiedEmbeddings: true,
      attentionDropout: 0.1,
      hiddenDropout: 0.1,
      source: 'config',
      id: 'gpt2/config.json',
    })
    expect(countParams(spec).total).toBe(124_439_808)
  })

  it('reads Llama field names: untied, SwiGLU, RMSNorm, RoPE', () => {
    const spec = modelSpecFromHfConfig(LLAMA2_7B, 'x')
    expect(spec).toMatchObject({
      mlp: 'swiglu',
      norm: 'rmsnorm',
      positions: 'rope',
      tiedEmbeddings: false,
      bias: 'none',
    })
    expect(countParams(spec).total).toBe(6_738_415_616)
  })

  it('reads experts, multi-query attention and encoders', () => {
    expect(modelSpecFromHfConfig(MIXTRAL, 'x').experts).toEqual({ count: 8, topK: 2 })
    expect(countParams(modelSpecFromHfConfig(MIXTRAL, 'x')).total).toBe(46_702_792_704)
    expect(modelSpecFromHfConfig(STARCODER, 'x')).toMatchObject({ kvHeads: 1, ffn: 8192 })
    const bert = modelSpecFromHfConfig(BERT, 'x')
    expect(bert).toMatchObject({ kind: 'encoder', typeVocab: 2 })
    expect(countParams(bert).total).toBe(109_482_240)
  })

  it('honours head_dim, qkv biases and MPT expansion ratios', () => {
    const gemma = modelSpecFromHfConfig(
      {
        ...LLAMA2_7B,
        model_type: 'gemma2',
        hidden_size: 2304,
        num_attention_heads: 8,
        num_key_value_heads: 4,
        head_dim: 256,
        hidden_activation: 'gelu_pytorch_tanh',
      },
      'x',
    )
    expect(gemma).toMatchObject({ headDim: 256, mlp: 'geglu', tiedEmbeddings: false })
    expect(modelSpecFromHfConfig({ ...LLAMA2_7B, model_type: 'qwen2' }, 'x').bias).toBe('qkv')
    const mpt = modelSpecFromHfConfig(
      {
        model_type: 'mpt',
        d_model: 2048,
        n_heads: 16,
        n_layers: 24,
        expansion_ratio: 4,
        max_seq_len: 2048,
        vocab_size: 50368,
        attn_config: { alibi: true },
      },
      'x',
    )
    expect(mpt).toMatchObject({ ffn: 8192, positions: 'alibi', bias: 'none' })
  })

  it('reads the language model of a multimodal config from text_config', () => {
    const spec = modelSpecFromHfConfig({ model_type: 'llava', text_config: LLAMA2_7B }, 'x')
    expect(spec.modelType).toBe('llama')
    expect(spec.hidden).toBe(4096)
  })

  it('infers an unknown model type from its fields, and says which field is missing when it cannot', () => {
    const spec = modelSpecFromHfConfig({ ...LLAMA2_7B, model_type: 'my_llama' }, 'x')
    expect(spec).toMatchObject({
      modelType: 'my_llama',
      mlp: 'swiglu',
      norm: 'rmsnorm',
      positions: 'learned',
    })
    const { hidden_act: _, ...noAct } = LLAMA2_7B
    expect(failure({ ...noAct, model_type: 'my_llama' }).message).toContain('"hidden_act"')
  })

  it('names a missing field and the names it looked for, where the model type has no Transformers default', () => {
    const { num_attention_heads: _, ...noHeads } = LLAMA2_7B
    // A llama config omitting it reads Transformers' default (config-defaults.test.ts); a type rigfit has no
    // defaults for cannot.
    expect(modelSpecFromHfConfig(noHeads, 'config.json').heads).toBe(32)
    const error = failure({ ...noHeads, model_type: 'my_llama' })
    expect(error.code).toBe('E_MODEL_CONFIG')
    expect(error.kind).toBe('input')
    expect(error.message).toContain('config.json: field "num_attention_heads" is missing')
    expect(error.message).toContain('n_head')
    expect(error.suggestion).toBeTruthy()
  })

  it('names unusable fields', () => {
    expect(failure({ ...LLAMA2_7B, hidden_size: '4096' }).message).toContain(
      '"hidden_size" must be a positive integer',
    )
    expect(failure({ ...LLAMA2_7B, num_key_value_heads: 5 }).message).toContain('"num_key_value_heads"')
    expect(failure({ ...LLAMA2_7B, num_attention_heads: 30 }).message).toContain('"num_attention_heads"')
    expect(failure({ ...MIXTRAL, num_experts_per_tok: 9 }).message).toContain('"num_experts_per_tok"')
    expect(failure({ ...GPT2, attn_pdrop: 2 }).message).toContain('"attn_pdrop"')
    expect(failure({ ...LLAMA2_7B, model_type: undefined }).message).toContain('"model_type" is missing')
    expect(failure({ ...LLAMA2_7B, model_type: 'qwen2_moe' }).message).toContain('shared experts')
    expect(failure([1, 2]).message).toContain('must be a JSON object')
  })
})
