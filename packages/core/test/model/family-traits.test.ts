import { describe, expect, it } from 'vitest'
import { MODEL_TYPE_TRAITS, SUPPORTED_MODEL_TYPES, traitsOf } from '../../src/model/family-traits.js'
import { modelSpecFromHfConfig } from '../../src/model/hf-config.js'

describe('model type traits', () => {
  it('knows only its own model types, not names every object inherits', () => {
    expect(traitsOf('llama')?.mlp).toBe('swiglu')
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
      expect(traitsOf(name)).toBeUndefined()
  })

  it('cannot be changed by a caller', () => {
    expect(() => {
      ;(MODEL_TYPE_TRAITS.llama as { mlp: string }).mlp = 'gelu'
    }).toThrow(TypeError)
  })

  it.each(SUPPORTED_MODEL_TYPES)('gives a %s config.json the architecture of its type', (modelType) => {
    const traits = traitsOf(modelType)
    const spec = modelSpecFromHfConfig(
      {
        model_type: modelType,
        hidden_size: 256,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        // Mistral, Mixtral and Qwen2 default to more key/value heads than these 4 attention heads.
        num_key_value_heads: 4,
        intermediate_size: 1024,
        vocab_size: 1000,
        max_position_embeddings: 512,
      },
      'config.json',
    )
    expect({ kind: spec.kind, mlp: spec.mlp, norm: spec.norm }).toEqual({
      kind: traits?.kind,
      mlp: traits?.mlp,
      norm: traits?.norm,
    })
  })
})
