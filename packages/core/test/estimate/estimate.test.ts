import { describe, expect, it } from 'vitest'
import { deepFreeze } from '../../src/deep-freeze.js'
import { blockActivationBytes } from '../../src/estimate/activations.js'
import { MATMUL_EFFICIENCY, NF4_BYTES_PER_PARAM } from '../../src/estimate/constants.js'
import { estimate } from '../../src/estimate/estimate.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { countParams } from '../../src/model/params.js'
import { EstimateInput, EstimateResult, type ModelSpec } from '../../src/schemas/index.js'

const model = (id: string): ModelSpec => {
  const spec = findCatalogModel(id)
  if (!spec) throw new Error(id)
  return spec
}
const A100 = {
  name: 'A100 80GB',
  kind: 'cuda' as const,
  vramBytes: 80 * 2 ** 30,
  fp16TensorTflops: 312,
  fp32Tflops: 19.5,
  memoryBandwidthGBs: 2039,
  bf16: true,
  tf32: true,
  computeCapability: '8.0',
}
const V100 = {
  ...A100,
  name: 'V100',
  vramBytes: 16 * 2 ** 30,
  fp16TensorTflops: 125,
  fp32Tflops: 15.7,
  memoryBandwidthGBs: 900,
  bf16: false,
  tf32: false,
  computeCapability: '7.0',
}
const run = (fields: Partial<EstimateInput> & { model: ModelSpec }) =>
  estimate(EstimateInput.parse({ seq: 1024, microBatch: 1, ...fields }))

describe('estimate: the JSON contract', () => {
  it('returns integer bytes that the EstimateResult schema accepts, without a device', () => {
    const result = run({ model: model('gpt2') })
    expect(() => EstimateResult.parse(result)).not.toThrow()
    expect(result.fits).toBeNull()
    expect(result.capacity).toBeNull()
    expect(result.throughput).toBeNull()
    expect(result.perDevice.total).toBe(result.perDevice.reserved + result.perDevice.cudaContext)
    expect(result.perDevice.reserved).toBeGreaterThanOrEqual(result.perDevice.peakAllocated)
  })

  it('sets fits, capacity and throughput with a device', () => {
    const result = run({ model: model('gpt2'), device: A100 })
    expect(result.capacity).toBe(80 * 2 ** 30)
    expect(result.fits).toBe(true)
    expect(result.throughput?.tokensPerSecond).toBeGreaterThan(0)
    expect(run({ model: model('llama-2-70b'), device: A100 }).fits).toBe(false)
  })

  it.each([
    ['full training on a GPU', { model: model('llama-3-8b'), seq: 512, microBatch: 2, device: A100 }],
    [
      'LoRA',
      { model: model('llama-3-8b'), seq: 512, microBatch: 1, lora: { rank: 16, targets: ['q', 'v'] } },
    ],
    ['mixture of experts', { model: model('mixtral-8x7b'), seq: 256, microBatch: 1, device: A100 }],
    ['an encoder', { model: model('bert-base-uncased'), seq: 128, microBatch: 8 }],
  ])('does not change its input, however deep (%s)', (_, raw) => {
    const parsed = EstimateInput.parse(raw)
    const expected = estimate(structuredClone(parsed))
    // Frozen all the way down (model, device, LoRA targets): a write anywhere inside throws in strict mode.
    const frozen = deepFreeze(structuredClone(parsed))
    expect(estimate(frozen)).toEqual(expected)
    expect(frozen).toEqual(parsed)
  })
})

describe('estimate: memory terms', () => {
  it('keeps 16 bytes per parameter for AdamW under autocast: 4 weights, 4 gradients, 8 states', () => {
    const spec = model('llama-2-7b')
    const n = countParams(spec).total
    const r = run({ model: spec, precision: 'bf16-mixed' })
    expect(r.perDevice.weights).toBe(4 * n)
    expect(r.perDevice.gradients).toBe(4 * n)
    expect(r.perDevice.optimizer).toBe(8 * n)
  })

  it('halves everything in pure 16-bit, and 8-bit AdamW, Adafactor and SGD shrink the states', () => {
    const spec = model('llama-2-7b')
    const n = countParams(spec).total
    const pure = run({ model: spec, precision: 'bf16-true' })
    expect(pure.perDevice.weights).toBe(2 * n)
    expect(pure.perDevice.optimizer).toBe(4 * n)
    expect(run({ model: spec, optimizer: 'adamw-8bit' }).perDevice.optimizer / n).toBeCloseTo(2, 1)
    expect(run({ model: spec, optimizer: 'adafactor' }).perDevice.optimizer).toBeLessThan(0.01 * 8 * n)
    expect(run({ model: spec, optimizer: 'sgd' }).perDevice.optimizer).toBe(0)
    expect(run({ model: spec, optimizer: 'sgd-momentum' }).perDevice.optimizer).toBe(4 * n)
  })

  it('gives a frozen LoRA base no gradients and no optimizer states', () => {
    const spec = model('llama-2-7b')
    const lora = { rank: 8, targets: ['q', 'v'] as ('q' | 'v')[], dropout: 0 }
    // LitGPT's adapters in the base's bf16: 2-byte gradients and AdamW states.
    const r = run({ model: spec, precision: 'bf16-true', lora, adapterDtype: 'model' })
    expect(r.params.trainable).toBe(4_194_304)
    expect(r.perDevice.gradients).toBe(2 * 4_194_304)
    expect(r.perDevice.optimizer).toBe(4 * 4_194_304)
    expect(r.perDevice.weights).toBe(2 * countParams(spec, lora).total)
    // PEFT's adapters in fp32 beside the bf16 base.
    const peft = run({ model: spec, precision: 'bf16-true', lora })
    expect(peft.perDevice.gradients).toBe(4 * 4_194_304)
    expect(peft.perDevice.optimizer).toBe(8 * 4_194_304)
    expect(peft.perDevice.weights).toBe(2 * countParams(spec).total + 4 * 4_194_304)
  })

  it('stores QLoRA base layers in NF4 with their quantisation constants, embeddings in 16-bit', () => {
    const spec = model('llama-2-7b')
    const lora = { rank: 8, targets: ['q', 'v'] as ('q' | 'v')[], dropout: 0 }
    const r = run({ model: spec, precision: 'bf16-true', lora, quant: 'nf4' })
    const linear = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008)
    const rest = countParams(spec).total - linear
    // The adapters are PEFT's, in fp32.
    expect(r.perDevice.weights).toBe(Math.round(linear * NF4_BYTES_PER_PARAM + rest * 2 + 4 * 4_194_304))
    expect(NF4_BYTES_PER_PARAM).toBeCloseTo(0.5159, 3)
  })

  it('shards states, gradients and weights with ZeRO stages 1, 2, 3 and FSDP', () => {
    const spec = model('llama-2-13b')
    const one = run({ model: spec, precision: 'bf16-mixed', sharding: 'zero1', gpus: 1 })
    const eight = (sharding: EstimateInput['sharding']) =>
      run({ model: spec, precision: 'bf16-mixed', sharding, gpus: 8 }).perDevice
    expect(eight('zero1').optimizer).toBe(Math.round(one.perDevice.optimizer / 8))
    expect(eight('zero1').gradients).toBe(one.perDevice.gradients)
    expect(eight('zero2').gradients).toBe(Math.round(one.perDevice.gradients / 8))
    expect(eight('zero2').weights).toBe(one.perDevice.weights)
    expect(eight('zero3').weights).toBe(Math.round(one.perDevice.weights / 8))
    expect(eight('fsdp').weights).toBe(eight('zero3').weights)
    // Sharded mixed precision: 16-bit weights and gradients, fp32 master copy with the states.
    const n = countParams(spec).total
    expect(one.perDevice.weights).toBe(2 * n)
    expect(one.perDevice.optimizer).toBe(12 * n)
  })

  it('adds DDP gradient buckets on several GPUs without sharding', () => {
    const spec = model('gpt2-xl')
    const single = run({ model: spec, gpus: 1 })
    const ddp = run({ model: spec, gpus: 4 })
    expect(ddp.perDevice.other - single.perDevice.other).toBe(single.perDevice.gradients)
  })

  it('moves offloaded optimizer states (and weights) to host memory', () => {
    const spec = model('llama-2-7b')
    const n = countParams(spec).total
    const off = run({ model: spec, precision: 'bf16-mixed', offload: 'optimizer' })
    expect(off.perDevice.optimizer).toBe(0)
    expect(off.host.total).toBe(16 * n)
    const all = run({ model: spec, precision: 'bf16-mixed', sharding: 'zero3', gpus: 2, offload: 'all' })
    expect(all.perDevice.weights).toBe(0)
    expect(all.host.total).toBe(18 * n)
    expect(run({ model: spec }).host.total).toBe(0)
  })

  it('grows activations linearly with the micro-batch and keeps only layer inputs under checkpointing', () => {
    const spec = model('llama-2-7b')
    const a1 = run({ model: spec, precision: 'bf16-true', microBatch: 1 }).perDevice.activations
    const a4 = run({ model: spec, precision: 'bf16-true', microBatch: 4 }).perDevice.activations
    expect(a4).toBe(4 * a1)
    const ckpt = run({ model: spec, precision: 'bf16-true', gradCheckpointing: true }).perDevice.activations
    // 2sbh per layer plus the final norm's fp32 input and its normalised output, cast back to 16-bit.
    expect(ckpt).toBe(1024 * (32 * 4096 * 2 + 4096 * (4 + 2) + 4096 * 2))
  })

  it('grows eager attention with the square of the sequence; flash attention removes that term', () => {
    const spec = model('gpt2')
    const per = (seq: number, attention: EstimateInput['attention']) =>
      run({ model: spec, seq, attention, precision: 'bf16-true' }).perDevice.activations / seq
    expect(per(1024, 'eager') / per(512, 'eager')).toBeGreaterThan(1.3)
    expect(per(1024, 'flash')).toBeCloseTo(per(512, 'flash'), 6)
  })

  it('counts logits in fp32 for the loss, and a fused loss avoids most of them', () => {
    const spec = model('llama-3-8b')
    const plain = run({ model: spec, seq: 2048 }).perDevice.logits
    expect(plain).toBe(2048 * 128256 * (2 + 12))
    expect(run({ model: spec, seq: 2048, fusedLoss: true }).perDevice.logits).toBeLessThan(plain / 4)
    // Without autocast the loss runs in the weights' 16-bit type.
    expect(run({ model: spec, seq: 2048, precision: 'bf16-true' }).perDevice.logits).toBe(2048 * 128256 * 8)
  })

  it('peaks at the optimizer step when activations are small and states are large', () => {
    const spec = model('llama-2-7b')
    expect(run({ model: spec, seq: 128, gradCheckpointing: true }).peakPhase).toBe('optimizer-step')
    expect(run({ model: spec, seq: 4096, microBatch: 8 }).peakPhase).toBe('backward')
  })

  it('uses the CUDA context of the GPU generation unless told the measured one', () => {
    const spec = model('gpt2')
    expect(run({ model: spec, device: V100 }).perDevice.cudaContext).toBeLessThan(
      run({ model: spec, device: A100 }).perDevice.cudaContext,
    )
    expect(run({ model: spec, device: { ...A100, kind: 'cpu' } }).perDevice.cudaContext).toBe(0)
    expect(run({ model: spec, cudaContextBytes: 1343 * 2 ** 20 }).perDevice.cudaContext).toBe(1343 * 2 ** 20)
  })
})

describe('blockActivationBytes', () => {
  it('reproduces Korthikanti et al. 2022: 34sbh for a 16-bit GPT block with dropout, plus the score term', () => {
    const spec: ModelSpec = { ...model('gpt2'), hidden: 1024, heads: 16, headDim: 64, kvHeads: 16, ffn: 4096 }
    const ctx = {
      elementBytes: 2,
      residualBytes: 2,
      attention: 'eager' as const,
      fullTraining: true,
      lora: null,
    }
    const seq = 2048
    // Scores: fp32 softmax output (4), dropout mask (1), dropped probabilities (2) per element.
    expect(blockActivationBytes(spec, ctx, seq)).toBe(34 * 1024 + 16 * seq * 7)
    // Flash attention keeps Q, K, V and the output instead of the scores, plus an fp32 log-sum-exp per head.
    expect(blockActivationBytes(spec, { ...ctx, attention: 'flash' }, seq)).toBe(34 * 1024 + 16 * 4)
  })

  it('keeps less for a frozen block: only what flows gradients back to the adapters', () => {
    const spec = model('llama-2-7b')
    const full = blockActivationBytes(
      spec,
      { elementBytes: 2, residualBytes: 2, attention: 'flash', fullTraining: true, lora: null },
      1024,
    )
    const frozen = blockActivationBytes(
      spec,
      {
        elementBytes: 2,
        residualBytes: 2,
        attention: 'flash',
        fullTraining: false,
        lora: { rank: 8, targets: ['q', 'v'], dropout: 0 },
      },
      1024,
    )
    const withDropout = blockActivationBytes(
      spec,
      {
        elementBytes: 2,
        residualBytes: 2,
        attention: 'flash',
        fullTraining: false,
        lora: { rank: 8, targets: ['q', 'v'], dropout: 0.05 },
      },
      1024,
    )
    expect(frozen).toBeLessThan(full)
    expect(withDropout).toBeGreaterThan(frozen)
    // bitsandbytes < 0.43.2 4-bit layers keep their inputs although their weights are frozen: here the MLP's (q and v
    // already keep theirs for the adapters, and flash attention's output is o_proj's input).
    const quantized = { elementBytes: 2, residualBytes: 2, attention: 'flash' as const, fullTraining: false }
    const nf4 = blockActivationBytes(
      spec,
      { ...quantized, lora: { rank: 8, targets: ['q', 'v'], dropout: 0 }, quantKeepsInputs: true },
      1024,
    )
    expect(nf4 - frozen).toBe((4096 + 11008) * 2)
  })
})

describe('estimate: speed', () => {
  it('sums tokens/s over GPUs and keeps MFU below 1', () => {
    const spec = model('llama-2-7b')
    const r = run({ model: spec, gpus: 8, sharding: 'fsdp', seq: 2048, microBatch: 4, device: A100 })
    const t = r.throughput
    if (!t) throw new Error('no throughput')
    expect(t.tokensPerSecond).toBeCloseTo(8 * t.tokensPerSecondPerDevice, 6)
    expect(t.stepSeconds).toBeCloseTo((4 * 2048) / t.tokensPerSecondPerDevice, 6)
    expect(t.mfu).toBeGreaterThan(0.3)
    // Matrix multiplies run at the fitted efficiency at best; memory-bound time and recomputation only lower it.
    expect(t.mfu).toBeLessThan(MATMUL_EFFICIENCY)
  })

  it('is slower with recomputation, fp32, and bf16 on a GPU without bf16', () => {
    const spec = model('gpt2-medium')
    const tps = (fields: Partial<EstimateInput>) =>
      run({ model: spec, microBatch: 8, device: A100, ...fields }).throughput?.tokensPerSecondPerDevice ?? 0
    expect(tps({ gradCheckpointing: true })).toBeLessThan(tps({}))
    expect(tps({ precision: 'fp32' })).toBeLessThan(tps({}))
    expect(tps({ precision: 'fp32', tf32: true })).toBeGreaterThan(tps({ precision: 'fp32' }))
    const onV100 = (precision: EstimateInput['precision']) =>
      run({ model: spec, microBatch: 8, device: V100, precision }).speed?.peakTflops
    expect(onV100('bf16-mixed')).toBe(15.7)
    expect(onV100('fp16-mixed')).toBe(125)
  })

  it('charges data parallelism its communication for a known interconnect, and none when it is unknown', () => {
    const spec = model('llama-2-7b')
    const job = (fields: Partial<EstimateInput>) =>
      run({ model: spec, gpus: 8, sharding: 'fsdp', seq: 2048, device: A100, ...fields }).throughput
    const ideal = job({})?.tokensPerSecond ?? 0
    expect(job({ interconnect: 'nvlink' })?.tokensPerSecond).toBeCloseTo(ideal * 0.88, 6)
    expect(job({ interconnect: 'pcie' })?.tokensPerSecond).toBeCloseTo(ideal * 0.7, 6)
    // Two nodes: twice the ranks, the inter-node factor on top, and the same per-node FSDP shard.
    const twoNodes = run({
      model: spec,
      gpus: 8,
      nodes: 2,
      sharding: 'fsdp',
      seq: 2048,
      device: A100,
      interconnect: 'nvlink',
    })
    expect(twoNodes.throughput?.tokensPerSecond).toBeCloseTo(2 * ideal * 0.88 * 0.9, 6)
    expect(twoNodes.perDevice.weights).toBe(
      run({ model: spec, gpus: 8, sharding: 'fsdp', seq: 2048 }).perDevice.weights,
    )
  })

  it('shards ZeRO over every rank of the job, FSDP within a node', () => {
    const spec = model('llama-2-7b')
    const zero = (gpus: number, nodes: number) =>
      run({ model: spec, gpus, nodes, sharding: 'zero3' }).perDevice
    expect(zero(4, 2).weights).toBe(zero(8, 1).weights)
    expect(zero(4, 2).optimizer).toBe(zero(8, 1).optimizer)
  })

  it('shares the host among the ranks of a node that step offloaded optimizer states', () => {
    const spec = model('llama-2-7b')
    const step = (gpus: number) =>
      run({ model: spec, gpus, sharding: 'zero2', offload: 'optimizer', device: A100 }).throughput
        ?.stepSeconds ?? 0
    // Each rank steps 1/8 of the states, but 8 ranks share one host: the host part does not shrink with GPUs.
    expect(step(8)).toBeGreaterThan(step(1) / 8)
  })

  it('pays for dequantising NF4 weights and for offloading', () => {
    const spec = model('llama-2-7b')
    const lora = { rank: 16, targets: ['q', 'v'] as ('q' | 'v')[], dropout: 0 }
    const tps = (fields: Partial<EstimateInput>) =>
      run({ model: spec, device: A100, lora, precision: 'bf16-true', ...fields }).throughput
        ?.tokensPerSecondPerDevice ?? 0
    expect(tps({ quant: 'nf4' })).toBeLessThan(tps({}))
    const full = (offload: EstimateInput['offload']) =>
      run({ model: spec, device: A100, offload }).throughput?.tokensPerSecondPerDevice ?? 0
    expect(full('optimizer')).toBeLessThan(full('none'))
  })
})

describe('estimate: fit verdict', () => {
  const A100_40 = { ...A100, vramBytes: 40 * 2 ** 30 }
  it('calls a run borderline inside its kind’s error band, and fits or does not fit outside it', () => {
    const base = { model: model('llama-2-7b'), seq: 1024, microBatch: 1, precision: 'bf16-true' as const }
    for (const microBatch of [1, 2, 4, 8, 16]) {
      for (const lora of [null, { rank: 8, targets: ['q', 'v'] as ('q' | 'v')[], dropout: 0 }]) {
        const r = run({ ...base, microBatch, lora, device: A100_40 })
        const c = r.confidence
        if (!c) throw new Error('no confidence')
        expect(c.kind).toBe(lora ? 'lora' : 'full')
        expect(r.headroom).toBe(A100_40.vramBytes - r.perDevice.total)
        expect(c.low).toBeLessThanOrEqual(r.perDevice.total)
        expect(c.high).toBeGreaterThanOrEqual(r.perDevice.total)
        const expected =
          c.high <= A100_40.vramBytes ? 'fits' : c.low > A100_40.vramBytes ? 'does-not-fit' : 'borderline'
        expect(r.verdict).toBe(expected)
        expect(r.fits).toBe(expected === 'fits')
      }
    }
  })

  it('leaves the verdict out without a device', () => {
    const r = run({ model: model('gpt2'), seq: 512, microBatch: 1 })
    expect(r).toMatchObject({ fits: null, verdict: null, headroom: null, confidence: null })
  })
})
