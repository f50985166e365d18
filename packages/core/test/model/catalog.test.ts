import { describe, expect, it } from 'vitest'
import { findCatalogModel, listModels, MODEL_CATALOG } from '../../src/model/catalog.js'
import { traitsOf } from '../../src/model/family-traits.js'
import { ModelSpec } from '../../src/schemas/model-spec.js'

describe('model catalog', () => {
  it('holds valid, uniquely named specs for every family the issue lists', () => {
    const ids = new Set<string>()
    for (const spec of MODEL_CATALOG) {
      expect(() => ModelSpec.parse(spec), spec.id).not.toThrow()
      expect(ids.has(spec.id), spec.id).toBe(false)
      ids.add(spec.id)
      expect(spec.heads % spec.kvHeads, spec.id).toBe(0)
    }
    const types = new Set(listModels().map((m) => m.modelType))
    for (const type of [
      'gpt2',
      'gpt_neox',
      'llama',
      'mistral',
      'mixtral',
      'qwen2',
      'gemma2',
      'phi',
      'phi3',
      'gpt_bigcode',
      'bert',
    ]) {
      expect(types.has(type), type).toBe(true)
    }
  })

  it('finds models by id or Hugging Face repository, case-insensitively', () => {
    expect(findCatalogModel('llama-3.1-8b')?.name).toBe('meta-llama/Llama-3.1-8B')
    expect(findCatalogModel('meta-llama/llama-3.1-8b')?.id).toBe('llama-3.1-8b')
    expect(findCatalogModel('Qwen2.5-7B')?.id).toBe('qwen2.5-7b')
    expect(findCatalogModel('no-such-model')).toBeUndefined()
  })

  it('is frozen all the way down, so a caller cannot change what later lookups return', () => {
    expect(Object.isFrozen(MODEL_CATALOG)).toBe(true)
    const first = MODEL_CATALOG[0] as ModelSpec
    const layers = first.layers
    expect(() => {
      ;(first as { layers: number }).layers = 999
    }).toThrow(TypeError)
    expect(findCatalogModel(first.id)?.layers).toBe(layers)
    const moe = MODEL_CATALOG.find((spec) => spec.experts !== null)
    expect(moe, 'a mixture-of-experts model').toBeDefined()
    expect(() => {
      ;(moe?.experts as { topK: number }).topK = 99
    }).toThrow(TypeError)
    for (const spec of MODEL_CATALOG) expect(Object.isFrozen(spec), spec.id).toBe(true)
  })

  it("takes each model's architecture from its model type's traits", () => {
    for (const spec of MODEL_CATALOG) {
      const traits = traitsOf(spec.modelType)
      expect(traits, spec.modelType).toBeDefined()
      expect(
        { kind: spec.kind, mlp: spec.mlp, norm: spec.norm, positions: spec.positions, bias: spec.bias },
        spec.id,
      ).toEqual({
        kind: traits?.kind,
        mlp: traits?.mlp,
        norm: traits?.norm,
        positions: traits?.positions,
        bias: traits?.bias,
      })
    }
  })
})
