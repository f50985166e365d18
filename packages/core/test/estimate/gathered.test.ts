import { describe, expect, it } from 'vitest'
import { estimate } from '../../src/estimate/estimate.js'
import { gatheredWeightBytes } from '../../src/estimate/gathered.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { countParams, modelParts } from '../../src/model/params.js'
import { EstimateInput, type ModelSpec } from '../../src/schemas/index.js'

const spec = findCatalogModel('llama-2-13b') as ModelSpec
const lora = { rank: 8, targets: ['q', 'v'] as ('q' | 'v')[], dropout: 0 }
const run = (fields: Partial<EstimateInput>) =>
  estimate(
    EstimateInput.parse({
      model: spec,
      seq: 1024,
      microBatch: 1,
      precision: 'bf16-true',
      gradCheckpointing: true,
      ...fields,
    }),
  ).perDevice

describe('gathered weights', () => {
  const parts = modelParts(spec)
  const base = {
    stage: 3,
    offloadAll: false,
    frozenStaysGathered: true,
    fullTraining: true,
    weightsTotal: 2 * parts.total,
  }

  it('holds one running and one prefetched block (and its gradients) when the weights train', () => {
    const perBlock = gatheredWeightBytes(parts, base)
    expect(perBlock).toBeLessThan(base.weightsTotal / 10)
    expect(gatheredWeightBytes(parts, { ...base, frozenStaysGathered: false })).toBe(perBlock)
    expect(gatheredWeightBytes(parts, { ...base, stage: 2 })).toBe(0)
  })

  it('keeps a frozen base gathered through backward only where units stay gathered', () => {
    const frozen = { ...base, fullTraining: false }
    expect(gatheredWeightBytes(parts, frozen)).toBe(base.weightsTotal)
    const resharded = { ...frozen, frozenStaysGathered: false }
    expect(gatheredWeightBytes(parts, resharded)).toBeLessThan(base.weightsTotal / 10)
  })

  it('so such a LoRA run under FSDP holds the whole 16-bit model on each GPU whatever the GPU count', () => {
    const whole = 2 * countParams(spec, lora).total
    for (const gpus of [2, 4, 8]) {
      const kept = run({ lora, gpus, sharding: 'fsdp', frozenStaysGathered: true })
      expect(kept.peakAllocated - kept.weights).toBeGreaterThan(whole)
      const resharded = run({ lora, gpus, sharding: 'fsdp' })
      expect(resharded.peakAllocated).toBeLessThan(kept.peakAllocated - whole / 2)
      // ZeRO-3 releases parameters in its own backward hook.
      expect(run({ lora, gpus, sharding: 'zero3', frozenStaysGathered: true }).peakAllocated).toBe(
        resharded.peakAllocated,
      )
    }
  })
})
