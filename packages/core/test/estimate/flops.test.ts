import { describe, expect, it } from 'vitest'
import { flopsPerToken, matmulParamsPerToken } from '../../src/estimate/flops.js'
import { findCatalogModel } from '../../src/model/catalog.js'

const spec = (id: string) => {
  const m = findCatalogModel(id)
  if (!m) throw new Error(id)
  return m
}

describe('flopsPerToken', () => {
  it('is 6N + 12·L·s·d with N the weights a token multiplies through', () => {
    const llama = spec('llama-2-7b')
    const n = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008) + 32000 * 4096
    expect(matmulParamsPerToken(llama)).toBe(n)
    expect(flopsPerToken(llama, 4096, { gradCheckpointing: false })).toBe(6 * n + 12 * 32 * 4096 * 4096)
  })

  it('adds a forward pass under recomputation (x4/3)', () => {
    const gpt = spec('gpt2-xl')
    const plain = flopsPerToken(gpt, 1024, { gradCheckpointing: false })
    expect(flopsPerToken(gpt, 1024, { gradCheckpointing: true })).toBeCloseTo((plain * 4) / 3, 0)
  })

  it('counts top-k experts only, and skips frozen weight gradients under LoRA', () => {
    const mixtral = spec('mixtral-8x7b')
    const active = matmulParamsPerToken(mixtral)
    expect(active).toBeLessThan(14e9)
    expect(active).toBeGreaterThan(12e9)
    const llama = spec('llama-2-7b')
    const full = flopsPerToken(llama, 2048, { gradCheckpointing: false })
    const lora = flopsPerToken(llama, 2048, {
      gradCheckpointing: false,
      lora: { rank: 8, targets: ['q', 'v'] },
    })
    expect(lora / full).toBeGreaterThan(0.6)
    expect(lora / full).toBeLessThan(0.7)
  })
})
