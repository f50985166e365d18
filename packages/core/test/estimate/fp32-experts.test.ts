import { describe, expect, it } from 'vitest'
import { estimate } from '../../src/estimate/estimate.js'
import { expertFlopsPerToken, expertsInFp32 } from '../../src/estimate/fp32-experts.js'
import { validationInput } from '../../src/estimate/validation.js'
import { MODEL_CATALOG } from '../../src/model/catalog.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'
import { EstimateInput, Precision } from '../../src/schemas/index.js'
import { resolveStack } from '../../src/stack/resolve-stack.js'

const h200Row = loadValidationRows().find((row) => row.gpu.name === 'NVIDIA H200')
if (!h200Row) throw new Error('the validation dataset has no H200 row')
const H200 = validationInput(h200Row).device

describe('a mixture of experts run outside autocast', () => {
  it('multiplies in fp32 only for experts that train in fp32 under autocast, on the stacks that run them so', () => {
    for (const model of MODEL_CATALOG) {
      for (const precision of Precision.options) {
        for (const lora of [null, { rank: 16, targets: ['q', 'v'] }]) {
          const input = (expertsOutsideAutocast: boolean) =>
            EstimateInput.parse({
              model,
              device: H200,
              seq: 512,
              microBatch: 1,
              precision,
              lora,
              expertsOutsideAutocast,
            })
          const where = `${model.id} ${precision} ${lora ? 'lora' : 'full'}`
          const inFp32 = model.experts !== null && lora === null && precision.endsWith('-mixed')
          expect(expertsInFp32(input(true)), where).toBe(inFp32)
          expect(expertsInFp32(input(false)), where).toBe(false)
          const outside = estimate(input(true)).throughput?.stepSeconds ?? 0
          const inside = estimate(input(false)).throughput?.stepSeconds ?? 0
          if (inFp32) expect(outside, where).toBeGreaterThan(inside)
          else expect(outside, where).toBe(inside)
        }
      }
    }
  })

  it('counts each token’s top-k experts forward and backward, and the forward again under checkpointing', () => {
    for (const model of MODEL_CATALOG.filter((m) => m.experts !== null)) {
      const perPass = 2 * model.layers * (model.experts?.topK ?? 0) * 3 * model.hidden * model.ffn
      expect(expertFlopsPerToken(model, false), model.id).toBe(3 * perPass)
      expect(expertFlopsPerToken(model, true), model.id).toBe(4 * perPass)
    }
  })

  it('is what Transformers does from 5.17, where rigfit measured it, and no other stack', () => {
    expect(resolveStack({ name: 'hf', version: '5.17' }).mechanisms.expertsOutsideAutocast).toBe(true)
    expect(resolveStack({ name: 'hf', version: '4.57' }).mechanisms.expertsOutsideAutocast).toBe(false)
    for (const name of ['litgpt', 'torchtune', 'torchtitan', 'nemo', 'plain'] as const) {
      expect(resolveStack({ name, version: '99' }).mechanisms.expertsOutsideAutocast, name).toBe(false)
    }
  })
})
