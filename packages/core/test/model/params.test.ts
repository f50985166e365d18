import { describe, expect, it } from 'vitest'
import { findCatalogModel, listModels } from '../../src/model/catalog.js'
import { countParams, loraParamsPerLayer } from '../../src/model/params.js'

const model = (id: string) => {
  const spec = findCatalogModel(id)
  if (!spec) throw new Error(`no catalog model ${id}`)
  return spec
}

describe('countParams', () => {
  // Totals as the Hugging Face implementations count them (sum of p.numel()).
  it.each([
    ['gpt2', 124_439_808],
    ['pythia-160m', 162_322_944],
    ['bert-large-uncased', 335_141_888],
    ['bert-base-uncased', 109_482_240],
    ['llama-2-7b', 6_738_415_616],
    ['llama-3-8b', 8_030_261_248],
    ['llama-3.2-1b', 1_235_814_400],
    ['mistral-7b', 7_241_732_096],
    ['mixtral-8x7b', 46_702_792_704],
    ['qwen2.5-0.5b', 494_032_768],
    ['qwen2.5-7b', 7_615_616_512],
    ['smollm-135m', 134_515_008],
  ])('%s has %d parameters', (id, expected) => {
    expect(countParams(model(id)).total).toBe(expected)
  })

  it('comes within 0.01% of models whose extra norms it does not count (Gemma 2, Phi)', () => {
    expect(countParams(model('gemma-2-2b')).total / 2_614_341_888).toBeCloseTo(1, 4)
    expect(countParams(model('phi-2')).total / 2_779_683_840).toBeCloseTo(1, 4)
  })

  it('counts LoRA adapters as LitGPT reports them (rank 8 on query and value)', () => {
    const lora = { rank: 8, targets: ['q', 'v'] as ('q' | 'v')[] }
    expect(countParams(model('llama-2-7b'), lora).trainable).toBe(4_194_304)
    expect(countParams(model('llama-2-13b'), lora).trainable).toBe(6_553_600)
    expect(countParams(model('phi-1.5'), lora).trainable).toBe(1_572_864)
  })

  it('makes only the adapters trainable and adds them to the total', () => {
    const spec = model('llama-3-8b')
    const base = countParams(spec)
    const withLora = countParams(spec, { rank: 16, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] })
    expect(base.trainable).toBe(base.total)
    expect(withLora.total).toBe(base.total + withLora.trainable)
    // GQA: k and v project to 8 x 128 = 1024, not 4096.
    expect(loraParamsPerLayer(spec, { rank: 1, targets: ['k'] })).toBe(4096 + 1024)
  })

  it('counts every expert of a mixture but a GELU MLP has no gate to adapt', () => {
    const mixtral = model('mixtral-8x7b')
    expect(loraParamsPerLayer(mixtral, { rank: 1, targets: ['up'] })).toBe(8 * (4096 + 14336))
    expect(loraParamsPerLayer(model('gpt2'), { rank: 4, targets: ['gate'] })).toBe(0)
  })

  it('separates embeddings and a per-layer count', () => {
    const gpt2 = countParams(model('gpt2'))
    expect(gpt2.embedding).toBe(50257 * 768 + 1024 * 768)
    expect(gpt2.perLayer).toBe(7_087_872)
    const llama = countParams(model('llama-2-7b'))
    expect(llama.embedding).toBe(2 * 32000 * 4096)
  })

  it('gives every catalog model a total between 50M and 100B', () => {
    for (const spec of listModels()) {
      const { total } = countParams(spec)
      expect(total, spec.id).toBeGreaterThan(5e7)
      expect(total, spec.id).toBeLessThan(1e11)
    }
  })
})
