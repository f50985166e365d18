import { describe, expect, it } from 'vitest'
import { isRigfitError, type RigfitError } from '../../src/errors.js'
import { SUPPORTED_MODEL_TYPES } from '../../src/model/family-traits.js'
import { modelSpecFromHfConfig } from '../../src/model/hf-config.js'
import { nearestSupportedModelType } from '../../src/model/unpriceable.js'

const DECODER = {
  hidden_size: 256,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  intermediate_size: 512,
  vocab_size: 1000,
  max_position_embeddings: 512,
  hidden_act: 'silu',
  rms_norm_eps: 1e-6,
}

function refusal(json: Record<string, unknown>): RigfitError {
  try {
    modelSpecFromHfConfig(json, 'config.json')
  } catch (error) {
    if (isRigfitError(error)) return error
    throw error
  }
  throw new Error('expected a refusal')
}

describe('architectures rigfit cannot price', () => {
  it.each([
    [
      'qwen2_moe',
      { shared_expert_intermediate_size: 5632, num_experts: 60, num_experts_per_tok: 4 },
      'qwen2',
    ],
    ['qwen3_moe', { moe_intermediate_size: 768, num_experts: 128, num_experts_per_tok: 8 }, 'qwen3'],
    [
      'deepseek_v3',
      { n_shared_experts: 1, n_routed_experts: 256, kv_lora_rank: 512, num_experts_per_tok: 8 },
      undefined,
    ],
    ['deepseek_v2_lite', { kv_lora_rank: 512 }, undefined],
    ['t5', { is_encoder_decoder: true }, undefined],
    ['mamba', { state_size: 16 }, undefined],
    ['jamba', {}, undefined],
    ['renamed_llama', { is_encoder_decoder: true }, undefined],
  ])('%s is refused naming its model_type and the nearest supported one', (modelType, extra, nearest) => {
    const error = refusal({ ...DECODER, model_type: modelType, ...extra })
    expect(error.code).toBe('E_MODEL_UNSUPPORTED')
    expect(error.message).toContain(`"${modelType}"`)
    const named = (error.details as { nearest: string }).nearest
    expect(SUPPORTED_MODEL_TYPES).toContain(named)
    expect(error.suggestion).toContain(`"${named}"`)
    if (nearest) expect(named).toBe(nearest)
  })

  it('prices an unknown type whose config spells out a supported layout', () => {
    const spec = modelSpecFromHfConfig({ ...DECODER, model_type: 'my_llama' }, 'config.json')
    expect(spec).toMatchObject({ modelType: 'my_llama', mlp: 'swiglu', norm: 'rmsnorm', layers: 2 })
  })

  it('names the nearest supported type when an unknown layout cannot be told', () => {
    const { hidden_act: _, ...noAct } = DECODER
    const error = refusal({ ...noAct, model_type: 'llama5' })
    expect(error.suggestion).toContain('"llama"')
  })

  it('the nearest type shares the longest prefix, then the fewest edits', () => {
    expect(nearestSupportedModelType('gemma3')).toMatch(/^gemma/)
    expect(nearestSupportedModelType('mistral3')).toBe('mistral')
    expect(nearestSupportedModelType('phi4')).toMatch(/^phi/)
    for (const type of SUPPORTED_MODEL_TYPES) expect(nearestSupportedModelType(type)).toBe(type)
  })
})
