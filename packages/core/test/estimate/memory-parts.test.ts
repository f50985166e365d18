import { describe, expect, it } from 'vitest'
import { estimate } from '../../src/estimate/estimate.js'
import { MEMORY_PARTS, MEMORY_TERMS, memoryPartLabel } from '../../src/estimate/memory-parts.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { EstimateInput } from '../../src/schemas/index.js'

const gpt2 = findCatalogModel('gpt2')
if (!gpt2) throw new Error('gpt2 is not in the catalog')

describe('memory parts: one table for every view', () => {
  it('names each part once, the training terms first', () => {
    const keys = MEMORY_PARTS.map(([key]) => key)
    const labels = MEMORY_PARTS.map(([, label]) => label)
    expect(new Set(keys).size).toBe(keys.length)
    expect(new Set(labels).size).toBe(labels.length)
    expect(MEMORY_PARTS.slice(0, MEMORY_TERMS.length)).toEqual(MEMORY_TERMS)
    for (const [key, label] of MEMORY_PARTS) expect(memoryPartLabel(key)).toBe(label)
  })

  it("every training term is a byte count of the estimate's breakdown", () => {
    for (const offload of ['none', 'optimizer', 'all'] as const) {
      const result = estimate(
        EstimateInput.parse({ model: gpt2, seq: 512, microBatch: 2, gpus: 2, sharding: 'zero3', offload }),
      )
      const d = result.perDevice
      for (const [key] of MEMORY_TERMS) expect(d[key], `${offload} ${key}`).toBeGreaterThanOrEqual(0)
      // The terms are what training allocates: their largest simultaneous sum is the peak, so none passes it.
      for (const [key] of MEMORY_TERMS) expect(d[key]).toBeLessThanOrEqual(d.total)
      expect(d.cudaContext).toBeGreaterThan(0)
    }
  })
})
