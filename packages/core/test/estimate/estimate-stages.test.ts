import { describe, expect, it } from 'vitest'
import { activationMemory } from '../../src/estimate/activation-stage.js'
import {
  allocatorMemory,
  estimate,
  parameterCounts,
  phasePeaks,
  precisionBytes,
  SHIPPED_TUNING,
  shardedMemory,
} from '../../src/estimate/estimate.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { EstimateInput, type ModelSpec } from '../../src/schemas/index.js'

const model = (id: string): ModelSpec => {
  const spec = findCatalogModel(id)
  if (!spec) throw new Error(id)
  return spec
}

// Every sharding, precision and offload of two models, full training and LoRA: the stages compose into estimate().
const inputs = ['gpt2', 'llama-3-8b'].flatMap((id) =>
  (['none', 'zero1', 'zero2', 'zero3', 'fsdp'] as const).flatMap((sharding) =>
    (['fp32', 'bf16-mixed', 'bf16-true'] as const).flatMap((precision) =>
      (['none', 'optimizer', 'all'] as const).flatMap((offload) =>
        [null, { rank: 8, targets: ['q', 'v'] as const }].map((lora) =>
          EstimateInput.parse({
            model: model(id),
            seq: 512,
            microBatch: 2,
            gpus: 4,
            sharding,
            precision,
            offload,
            lora,
          }),
        ),
      ),
    ),
  ),
)

describe('estimate: named stages', () => {
  it('shards weights, gradients and optimizer state by the ZeRO stage the precision stage settles', () => {
    for (const input of inputs) {
      const params = parameterCounts(input)
      const bytes = precisionBytes(input, params)
      const shards = shardedMemory(input, params, bytes)
      const label = `${input.model.name} ${input.sharding} ${input.precision} ${input.offload} lora=${!!input.lora}`
      expect(params.trainable, label).toBe(input.lora ? params.adapters : params.parts.total)
      expect(shards.gradients * (bytes.stage >= 2 ? shards.shardRanks : 1), label).toBeCloseTo(
        params.trainable * bytes.gradBytes,
      )
      if (input.offload === 'all') expect(shards.weights, label).toBe(0)
      else
        expect(shards.weights * (bytes.stage >= 3 ? shards.shardRanks : 1), label).toBeCloseTo(
          shards.weightsTotal,
        )
      if (input.offload !== 'none') expect(shards.optimizer, label).toBe(0)
    }
  })

  it('rounds the peak and allocator stages into the result estimate() returns', () => {
    for (const input of inputs) {
      const params = parameterCounts(input)
      const bytes = precisionBytes(input, params)
      const shards = shardedMemory(input, params, bytes)
      const acts = activationMemory(input, params, bytes)
      const held = { params, bytes, shards, acts }
      const peaks = phasePeaks(input, held)
      const alloc = allocatorMemory(input, SHIPPED_TUNING, held, peaks)
      const result = estimate(input)
      expect(peaks.peakAllocated).toBe(Math.max(peaks.backwardPeak, peaks.backwardEndPeak, peaks.stepPeak))
      expect(result.perDevice.peakAllocated).toBe(Math.round(peaks.peakAllocated))
      expect(result.perDevice.activations).toBe(Math.round(acts.activations))
      expect(result.perDevice.reserved).toBe(Math.round(alloc.reserved))
      expect(alloc.reserved).toBeGreaterThanOrEqual(peaks.peakAllocated)
      expect(result.peakPhase).toBe(peaks.backwardMax >= peaks.stepPeak ? 'backward' : 'optimizer-step')
    }
  })
})
