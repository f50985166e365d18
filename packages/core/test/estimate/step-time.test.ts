import { describe, expect, it } from 'vitest'
import { attentionWorkShare } from '../../src/estimate/attention-work.js'
import {
  COMPILED_KERNEL_SHARE,
  KERNEL_OVERHEAD_SECONDS,
  OPTIMIZER_KERNELS_PER_TENSOR,
} from '../../src/estimate/constants.js'
import { sustainedPeakShare } from '../../src/estimate/device-efficiency.js'
import { type ElementwiseContext, eagerElementwiseBytes } from '../../src/estimate/elementwise.js'
import { estimate, SHIPPED_TUNING } from '../../src/estimate/estimate.js'
import { attentionFlopsPerToken } from '../../src/estimate/flops.js'
import {
  forwardKernelsPerBlock,
  kernelsPerMicroStep,
  optimizerStepKernels,
} from '../../src/estimate/kernels.js'
import { findCatalogModel, MODEL_CATALOG } from '../../src/model/catalog.js'
import { EstimateInput, type ModelSpec } from '../../src/schemas/index.js'

const model = (id: string): ModelSpec => {
  const spec = findCatalogModel(id)
  if (!spec) throw new Error(id)
  return spec
}
const H100 = {
  name: 'H100 80GB HBM3',
  kind: 'cuda' as const,
  vramBytes: 80 * 2 ** 30,
  fp16TensorTflops: 989,
  fp32Tflops: 67,
  memoryBandwidthGBs: 3350,
  bf16: true,
  tf32: true,
  computeCapability: '9.0',
}
const input = (fields: Partial<EstimateInput> & { model: ModelSpec }) =>
  EstimateInput.parse({ seq: 1024, microBatch: 1, precision: 'bf16-mixed', device: H100, ...fields })
const tokensPerSecond = (fields: Partial<EstimateInput> & { model: ModelSpec }) =>
  estimate(input(fields)).throughput?.tokensPerSecondPerDevice ?? 0

const decoders = MODEL_CATALOG.filter((spec) => spec.kind === 'decoder')

describe('kernel launches', () => {
  it('grow with the layers, add a forward under checkpointing and adapters per target, shrink under compile', () => {
    for (const spec of decoders) {
      const base = kernelsPerMicroStep(input({ model: spec }))
      const deeper = kernelsPerMicroStep(input({ model: { ...spec, layers: spec.layers * 2 } }))
      const perLayer = (deeper - base) / spec.layers
      // Forward, then a backward of about twice as many: three forwards' worth per block.
      expect(perLayer, spec.id).toBe(3 * forwardKernelsPerBlock(spec, true))
      expect(kernelsPerMicroStep(input({ model: spec, gradCheckpointing: true })), spec.id).toBeGreaterThan(
        base,
      )
      const lora = (targets: ('q' | 'k' | 'v' | 'o')[]) =>
        kernelsPerMicroStep(input({ model: spec, lora: { rank: 16, targets, dropout: 0 } }))
      expect(lora(['q', 'v']), spec.id).toBeGreaterThan(base)
      expect(lora(['q', 'k', 'v', 'o']), spec.id).toBeGreaterThan(lora(['q', 'v']))
      expect(kernelsPerMicroStep(input({ model: spec, compile: true })), spec.id).toBeCloseTo(
        base * COMPILED_KERNEL_SHARE,
      )
    }
  })

  it('count autocast casts, RMSNorm in fp32 ops and rotary embeddings: a Llama block launches more than GPT-2', () => {
    const llama = model('llama-3.2-1b')
    const gpt2 = model('gpt2')
    expect(forwardKernelsPerBlock(llama, true)).toBeGreaterThan(forwardKernelsPerBlock(gpt2, true))
    expect(forwardKernelsPerBlock(llama, true)).toBeGreaterThan(forwardKernelsPerBlock(llama, false))
    const eager = kernelsPerMicroStep(input({ model: llama, attention: 'eager' }))
    expect(eager).toBeGreaterThan(kernelsPerMicroStep(input({ model: llama, attention: 'sdpa' })))
  })

  it('cost a per-tensor optimizer loop a dozen launches per trained tensor, the batched steps none', () => {
    for (const spec of decoders) {
      const perTensor = optimizerStepKernels(input({ model: spec, optimizerImpl: 'per-tensor' }))
      expect(perTensor % OPTIMIZER_KERNELS_PER_TENSOR, spec.id).toBe(0)
      expect(perTensor, spec.id).toBeGreaterThanOrEqual(spec.layers * OPTIMIZER_KERNELS_PER_TENSOR)
      expect(optimizerStepKernels(input({ model: spec, optimizerImpl: 'foreach' }))).toBe(0)
      expect(optimizerStepKernels(input({ model: spec, optimizerImpl: 'fused' }))).toBe(0)
      const adapters = optimizerStepKernels(
        input({
          model: spec,
          optimizerImpl: 'per-tensor',
          lora: { rank: 8, targets: ['q', 'v'], dropout: 0 },
        }),
      )
      expect(adapters, spec.id).toBe(spec.layers * 4 * OPTIMIZER_KERNELS_PER_TENSOR)
    }
  })
})

describe('eager element-wise traffic', () => {
  it('is larger for an fp32 RMSNorm, rotary, grouped-query layout than for a GPT block of the same widths', () => {
    const gpt2 = model('gpt2')
    const llamaLike: ModelSpec = {
      ...gpt2,
      norm: 'rmsnorm',
      positions: 'rope',
      mlp: 'swiglu',
      kvHeads: gpt2.heads / 4,
    }
    const ctx = { elementBytes: 2, residualBytes: 4, attention: 'sdpa' as const, lora: null }
    expect(eagerElementwiseBytes(llamaLike, ctx, 1024)).toBeGreaterThan(
      eagerElementwiseBytes(gpt2, ctx, 1024),
    )
  })

  it('grows with the element size, with the sequence only under eager attention, and with each adapter', () => {
    for (const spec of decoders) {
      const ctx: ElementwiseContext = { elementBytes: 2, residualBytes: 4, attention: 'sdpa', lora: null }
      const at = (fields: Partial<ElementwiseContext>, seq = 1024) =>
        eagerElementwiseBytes(spec, { ...ctx, ...fields }, seq)
      expect(at({ elementBytes: 4 }), spec.id).toBeGreaterThan(at({}))
      expect(at({}, 4096), spec.id).toBe(at({}, 1024))
      expect(at({ attention: 'eager' }, 4096), spec.id).toBeGreaterThan(at({ attention: 'eager' }, 1024))
      expect(at({ lora: { targets: ['q', 'v'] } }), spec.id).toBeGreaterThan(at({}))
    }
  })
})

describe('step time', () => {
  it('amortises the launches: a small model gains tokens/s with the micro-batch, more than the matrix work alone', () => {
    for (const spec of decoders.filter((s) => s.layers * s.hidden < 40_000)) {
      const one = tokensPerSecond({ model: spec, microBatch: 1 })
      const eight = tokensPerSecond({ model: spec, microBatch: 8 })
      expect(eight, spec.id).toBeGreaterThan(one * 1.2)
    }
  })

  it('prices each launch at the fitted overhead: the difference a launch-free step would make', () => {
    const spec = model('llama-3.2-1b')
    const fields = input({ model: spec, microBatch: 2, gradAccum: 3 })
    const step = estimate(fields).throughput?.stepSeconds ?? 0
    const launchFree =
      estimate(fields, { ...SHIPPED_TUNING, kernelOverheadSeconds: 0 }).throughput?.stepSeconds ?? 0
    const launches = 3 * kernelsPerMicroStep(fields)
    expect(step - launchFree).toBeCloseTo(launches * KERNEL_OVERHEAD_SECONDS, 6)
  })

  it('is faster compiled, with a fused optimizer step, and slowest with a per-tensor loop', () => {
    for (const spec of decoders) {
      const eager = tokensPerSecond({ model: spec })
      expect(tokensPerSecond({ model: spec, compile: true }), spec.id).toBeGreaterThan(eager)
      const fused = tokensPerSecond({ model: spec, optimizerImpl: 'fused' })
      const foreach = tokensPerSecond({ model: spec, optimizerImpl: 'foreach' })
      const perTensor = tokensPerSecond({ model: spec, optimizerImpl: 'per-tensor' })
      expect(fused, spec.id).toBeGreaterThan(foreach)
      expect(foreach, spec.id).toBeGreaterThan(perTensor)
    }
  })

  it("runs attention's products at their own rate: the time they add is their FLOPs at the attention efficiency", () => {
    for (const spec of decoders) {
      for (const gradCheckpointing of [false, true]) {
        const shares = [512, 4096, 32768].map((seq) => {
          const fields = input({ model: spec, seq, microBatch: 2, gradAccum: 2, gradCheckpointing })
          const stepAt = (attentionEfficiency: number) =>
            estimate(fields, { ...SHIPPED_TUNING, attentionEfficiency }).throughput?.stepSeconds ?? 0
          const sustained = sustainedPeakShare(
            fields.device ?? H100,
            SHIPPED_TUNING.hopperSustainedShare,
            fields.precision,
          )
          const peakFlops =
            (estimate(fields).speed?.peakTflops ?? 0) * 1e12 * SHIPPED_TUNING.matmulEfficiency * sustained
          // A causal decoder under FlashAttention-2 kernels pays for its share of the score matrix.
          const attention =
            seq * 2 * 2 * attentionFlopsPerToken(spec, seq, gradCheckpointing) * attentionWorkShare(fields)
          const name = `${spec.id} seq ${seq}${gradCheckpointing ? ' ckpt' : ''}`
          // At the matmul's own rate attention costs nothing extra; at half of it, its FLOPs once more.
          expect(stepAt(0.5) - stepAt(1), name).toBeCloseTo(attention / peakFlops, 9)
          expect(stepAt(SHIPPED_TUNING.attentionEfficiency), name).toBeGreaterThan(stepAt(1))
          return (stepAt(0.5) - stepAt(1)) / stepAt(1)
        })
        // The score and value products grow with the square of the sequence, the rest of the step linearly.
        expect(shares, spec.id).toEqual([...shares].sort((a, b) => a - b))
      }
    }
  })

  it('charges the per-op cost on the CPU too, in series with the compute on the same cores', () => {
    const spec = model('smollm-135m')
    const cpu = {
      ...H100,
      name: 'CPU',
      kind: 'cpu' as const,
      fp16TensorTflops: null,
      computeCapability: null,
    }
    const onCpu = input({ model: spec, device: cpu, precision: 'fp32' })
    const step = (kernelOverheadSeconds: number) =>
      estimate(onCpu, { ...SHIPPED_TUNING, kernelOverheadSeconds }).throughput?.stepSeconds ?? Number.NaN
    const ops = kernelsPerMicroStep(onCpu) + optimizerStepKernels(onCpu)
    expect(ops).toBeGreaterThan(0)
    expect(step(1) - step(0)).toBeCloseTo(ops, 6)
    expect(step(SHIPPED_TUNING.kernelOverheadSeconds)).toBeGreaterThan(step(0))
  })
})

describe('logits upcast before the loss', () => {
  it('keeps fp32 copies in true 16-bit precision only; autocast and fp32 keep them either way', () => {
    for (const spec of decoders) {
      const logits = (precision: EstimateInput['precision'], upcastLogits: boolean) =>
        estimate(input({ model: spec, precision, upcastLogits })).perDevice.logits
      expect(logits('bf16-true', true), spec.id).toBeGreaterThan(logits('bf16-true', false))
      expect(logits('bf16-mixed', true), spec.id).toBe(logits('bf16-mixed', false))
      expect(logits('fp32', true), spec.id).toBe(logits('fp32', false))
    }
  })
})

describe('mixtures of experts and quantised bases', () => {
  const moe = MODEL_CATALOG.filter((spec) => spec.experts)

  it('launch every expert of the Hugging Face loop, with more work around it the more experts there are', () => {
    expect(moe.length).toBeGreaterThan(0)
    for (const spec of moe) {
      const experts = spec.experts as NonNullable<ModelSpec['experts']>
      const fewer = { ...spec, experts: { ...experts, count: experts.count / 2 } }
      expect(forwardKernelsPerBlock(spec, true), spec.id).toBeGreaterThan(forwardKernelsPerBlock(fewer, true))
      // The same top-k and widths without experts: one MLP and no router.
      const dense = { ...spec, experts: null }
      expect(forwardKernelsPerBlock(spec, true), spec.id).toBeGreaterThan(
        forwardKernelsPerBlock(dense, true) + experts.count,
      )
      const ctx: ElementwiseContext = { elementBytes: 2, residualBytes: 4, attention: 'sdpa', lora: null }
      const routed = eagerElementwiseBytes(spec, ctx, 1024) - eagerElementwiseBytes(dense, ctx, 1024)
      // Each token's hidden state goes to its top-k experts and back, forward and backward.
      expect(routed, spec.id).toBeGreaterThanOrEqual(3 * experts.topK * 4 * 2 * spec.hidden)
    }
  })

  it('dequantise every quantised linear in a kernel of its own', () => {
    for (const spec of decoders) {
      const lora = { rank: 16, targets: ['q', 'v'] as ('q' | 'v')[], dropout: 0 }
      const plain = kernelsPerMicroStep(input({ model: spec, lora }))
      for (const quant of ['nf4', 'int8'] as const) {
        const quantised = kernelsPerMicroStep(input({ model: spec, lora, quant }))
        const linears = 4 + (spec.mlp === 'gelu' ? 2 : 3) * (spec.experts?.count ?? 1)
        expect(quantised - plain, `${spec.id} ${quant}`).toBe(3 * spec.layers * linears)
      }
    }
  })
})
