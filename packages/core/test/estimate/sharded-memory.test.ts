import { describe, expect, it } from 'vitest'
import { blockActivationBytes } from '../../src/estimate/activations.js'
import { estimate } from '../../src/estimate/estimate.js'
import { MODEL_CATALOG } from '../../src/model/catalog.js'
import { EstimateInput, type ModelSpec } from '../../src/schemas/index.js'

const run = (model: ModelSpec, fields: Partial<EstimateInput>) =>
  estimate(
    EstimateInput.parse({ model, seq: 1024, microBatch: 2, gpus: 8, precision: 'bf16-mixed', ...fields }),
  )

describe('memory of sharded mixed precision', () => {
  it('ZeRO-1/2 add two 16-bit hidden x hidden reduce buckets in backward, where DDP keeps gradient-sized ones', () => {
    for (const model of MODEL_CATALOG) {
      const buckets = 2 * model.hidden * model.hidden * 2
      // In pure 16-bit with a fused step the runs differ only in their buckets: no autocast copies, the same
      // residual stream, no step temporaries.
      const same = { precision: 'bf16-true' as const, gradAccum: 1, optimizerImpl: 'fused' as const }
      const ddp = run(model, { ...same, sharding: 'none' }).perDevice
      for (const sharding of ['zero1', 'zero2'] as const) {
        const zero = run(model, { ...same, sharding }).perDevice
        expect(
          Math.abs(zero.other - buckets - (ddp.other - ddp.gradients)),
          `${model.id} ${sharding}`,
        ).toBeLessThanOrEqual(2)
      }
    }
  })

  it('keeps a 16-bit residual stream under ZeRO and FSDP, an fp32 one under autocast on one GPU or DDP', () => {
    for (const model of MODEL_CATALOG.filter((spec) => spec.kind === 'decoder')) {
      const ddp = run(model, { sharding: 'none' }).perDevice.activations
      for (const sharding of ['zero1', 'zero2', 'zero3', 'fsdp'] as const) {
        const sharded = run(model, { sharding }).perDevice.activations
        expect(sharded, `${model.id} ${sharding}`).toBeLessThan(ddp)
        // Exactly the 16-bit working model's activations: what pure bf16 keeps.
        const block = (residualBytes: number) =>
          blockActivationBytes(
            model,
            {
              elementBytes: 2,
              residualBytes,
              attention: 'sdpa',
              fullTraining: true,
              lora: null,
              quantKeepsInputs: false,
            },
            1024,
          )
        expect(block(2)).toBeLessThan(block(4))
        expect(sharded, `${model.id} ${sharding}`).toBe(
          run(model, { sharding, precision: 'bf16-true' }).perDevice.activations,
        )
      }
    }
  })
})
