import { describe, expect, it } from 'vitest'
import { ModelSpec } from '../schemas/model-spec.js'
import { findCatalogModel, listModels, MODEL_CATALOG } from './catalog.js'

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

  it('is frozen, so a caller cannot change the shared catalog', () => {
    expect(Object.isFrozen(MODEL_CATALOG)).toBe(true)
  })
})
