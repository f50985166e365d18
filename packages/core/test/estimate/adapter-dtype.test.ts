import { describe, expect, it } from 'vitest'
import { blockActivationBytes } from '../../src/estimate/activations.js'
import { adaptersInFp32 } from '../../src/estimate/adapter-dtype.js'
import { estimate } from '../../src/estimate/estimate.js'
import { listModels } from '../../src/model/catalog.js'
import { EstimateInput, type LoraTarget, type ModelSpec } from '../../src/schemas/index.js'

// A consumer card, where LoRA on a 16-bit base is the common run.
const RTX_4090 = {
  name: 'GeForce RTX 4090',
  kind: 'cuda' as const,
  vramBytes: 24 * 2 ** 30,
  fp16TensorTflops: 165.2,
  fp32Tflops: 82.6,
  memoryBandwidthGBs: 1008,
  bf16: true,
  tf32: true,
  computeCapability: '8.9',
}
const decoders = listModels().filter((spec) => spec.kind === 'decoder')
const targetSets: LoraTarget[][] = [
  ['q', 'v'],
  ['q', 'k', 'v', 'o'],
  ['q', 'k', 'v', 'o', 'gate', 'up', 'down'],
]
const run = (spec: ModelSpec, fields: Partial<EstimateInput>) =>
  estimate(EstimateInput.parse({ model: spec, seq: 512, microBatch: 2, device: RTX_4090, ...fields }))

describe('LoRA adapters in fp32 beside a 16-bit base (PEFT)', () => {
  it('changes nothing where the adapters are fp32 anyway or there are none', () => {
    for (const spec of decoders) {
      for (const precision of ['fp32', 'bf16-mixed', 'fp16-mixed'] as const) {
        const lora = { rank: 16, targets: ['q', 'k', 'v', 'o'] as LoraTarget[], dropout: 0 }
        expect(run(spec, { precision, lora, adapterDtype: 'fp32' }), `${spec.id} ${precision}`).toEqual(
          run(spec, { precision, lora, adapterDtype: 'model' }),
        )
      }
      expect(run(spec, { precision: 'bf16-true', adapterDtype: 'fp32' }), spec.id).toEqual(
        run(spec, { precision: 'bf16-true', adapterDtype: 'model' }),
      )
    }
  })

  it('keeps fp32 weights, gradients, states and input copies, and multiplies the adapters at the fp32 rate', () => {
    for (const spec of decoders) {
      for (const targets of targetSets) {
        for (const precision of ['bf16-true', 'fp16-true'] as const) {
          for (const gradCheckpointing of [false, true]) {
            const lora = { rank: 16, targets, dropout: 0 }
            const at = (adapterDtype: 'fp32' | 'model') =>
              run(spec, { precision, lora, gradCheckpointing, adapterDtype })
            const peft = at('fp32')
            const litgpt = at('model')
            const where = `${spec.id} ${targets.join('')} ${precision} ckpt=${gradCheckpointing}`
            const adapters = peft.params.trainable
            expect(peft.perDevice.gradients, where).toBe(2 * litgpt.perDevice.gradients)
            expect(peft.perDevice.gradients, where).toBe(4 * adapters)
            expect(peft.perDevice.weights - litgpt.perDevice.weights, where).toBe(2 * adapters)
            expect(peft.perDevice.peakAllocated, where).toBeGreaterThan(litgpt.perDevice.peakAllocated)
            if (!gradCheckpointing) {
              expect(peft.perDevice.activations, where).toBeGreaterThan(litgpt.perDevice.activations)
            }
            expect(peft.throughput?.tokensPerSecond ?? 0, where).toBeLessThan(
              litgpt.throughput?.tokensPerSecond ?? 0,
            )
          }
        }
      }
    }
  })

  it('counts one fp32 copy per adapted layer: q, k and v each cast the shared input', () => {
    const spec = decoders.find((s) => s.id === 'llama-2-7b') as ModelSpec
    // Adapters of 4 bytes (fp32) on bf16 activations, or null for adapters in the activations' type.
    const block = (adapterBytes: number | null, targets: LoraTarget[], dropout = 0) =>
      blockActivationBytes(
        spec,
        {
          elementBytes: 2,
          residualBytes: 2,
          attention: 'sdpa',
          fullTraining: false,
          lora: { rank: 16, targets, dropout },
          adapterBytes: adapterBytes ?? 2,
        },
        1024,
      )
    const h = 4096
    // Each adapter's B keeps its A's 16-wide output, 2 bytes more per element in fp32.
    const rankOutput = 16 * (4 - 2)
    // q, k, v: three fp32 copies of the normed input instead of one shared bf16 one; o: its own fp32 copy beside
    // the attention output SDPA keeps anyway.
    expect(block(4, ['q', 'k', 'v', 'o']) - block(null, ['q', 'k', 'v', 'o'])).toBe(
      3 * h * 4 - h * 2 + h * 4 + 4 * rankOutput,
    )
    // gate and up share the input, down reads the 11008-wide intermediate.
    expect(block(4, ['gate', 'up', 'down']) - block(null, ['gate', 'up', 'down'])).toBe(
      2 * h * 4 - h * 2 + 11008 * (4 - 2) + 3 * rankOutput,
    )
    // A dropout keeps its dropped copy in the adapter's type.
    expect(block(4, ['q'], 0.1) - block(null, ['q'], 0.1)).toBe(h * (4 - 2) + rankOutput)
  })

  it('applies to LoRA on a true 16-bit base only', () => {
    const lora = { rank: 8, targets: ['q'] as LoraTarget[], dropout: 0 }
    expect(adaptersInFp32({ lora, precision: 'bf16-true', adapterDtype: 'fp32' })).toBe(true)
    expect(adaptersInFp32({ lora, precision: 'fp16-true', adapterDtype: 'fp32' })).toBe(true)
    expect(adaptersInFp32({ lora, precision: 'bf16-true', adapterDtype: 'model' })).toBe(false)
    expect(adaptersInFp32({ lora, precision: 'bf16-mixed', adapterDtype: 'fp32' })).toBe(false)
    expect(adaptersInFp32({ lora: null, precision: 'bf16-true', adapterDtype: 'fp32' })).toBe(false)
  })
})
