import { describe, expect, it } from 'vitest'
import { attentionWorkShare } from '../../src/estimate/attention-work.js'
import { estimate } from '../../src/estimate/estimate.js'
import { validationInput } from '../../src/estimate/validation.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'
import { EstimateInput } from '../../src/schemas/index.js'
import { resolveStack } from '../../src/stack/resolve-stack.js'

// The A100 of VectorLM's rows, as the validation dataset states it.
const vectorlm = loadValidationRows().find((row) => row.source.id === 'vectorlm')
const device = vectorlm && validationInput(vectorlm).device
if (!device) throw new Error('no VectorLM row')
const llama = findCatalogModel('llama-3-8b')
const bert = findCatalogModel('bert-large-uncased')
if (!llama || !bert) throw new Error('catalog models missing')

const input = (over: Record<string, unknown>) =>
  EstimateInput.parse({ model: llama, seq: 2048, microBatch: 1, device, gradCheckpointing: true, ...over })
const speed = (over: Record<string, unknown>) =>
  estimate(input(over)).throughput?.tokensPerSecondPerDevice ?? 0

describe('the attention work a kernel pays for', () => {
  it('halves a causal decoder under FlashAttention-2 kernels, and nowhere else', () => {
    for (const attention of ['sdpa', 'flash'] as const) {
      expect(attentionWorkShare(input({ attention }))).toBe(0.5)
      expect(attentionWorkShare(input({ attention, flashAttention2: false }))).toBe(1)
    }
    expect(attentionWorkShare(input({ attention: 'eager' }))).toBe(1)
    expect(attentionWorkShare(EstimateInput.parse({ model: bert, seq: 512, microBatch: 8, device }))).toBe(1)
  })

  it('keeps more of the short-sequence speed at long sequences with FlashAttention-2, the more so the longer', () => {
    let previous = 0
    for (const seq of [2048, 8192, 32768]) {
      const kept = (fa2: boolean) =>
        speed({ seq, flashAttention2: fa2 }) / speed({ seq: 1024, flashAttention2: fa2 })
      expect(kept(true)).toBeGreaterThan(kept(false))
      const gain = kept(true) / kept(false)
      expect(gain).toBeGreaterThan(previous)
      previous = gain
    }
  })

  it('comes from the stack release: PyTorch 2.2 brought FlashAttention-2 into SDPA', () => {
    expect(resolveStack({ name: 'plain', version: '2.1' }).mechanisms.flashAttention2).toBe(false)
    expect(resolveStack({ name: 'plain', version: '2.2' }).mechanisms.flashAttention2).toBe(true)
    expect(resolveStack({ name: 'hf', version: '4.36' }).mechanisms.flashAttention2).toBe(false)
    expect(resolveStack({ name: 'hf', version: '4.38' }).mechanisms.flashAttention2).toBe(true)
    for (const name of ['litgpt', 'torchtune', 'torchtitan', 'nemo'] as const) {
      expect(resolveStack({ name, version: '9' }).mechanisms.flashAttention2, name).toBe(true)
    }
  })
})
