import { describe, expect, it } from 'vitest'
import { optimizerStepOn } from '../../src/estimate/optimizer-step-device.js'
import { validationInput } from '../../src/estimate/validation.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'
import { pointEstimateInput } from '../../src/plan/training-point.js'
import type { EstimateDevice } from '../../src/schemas/index.js'
import { resolveStack } from '../../src/stack/resolve-stack.js'
import { userEstimateInput } from '../../src/stack/stack-estimate-input.js'
import { parseStackRef } from '../../src/stack/stack-ref.js'

const KINDS = ['cuda', 'rocm', 'xpu', 'mps', 'cpu'] as const
const IMPLS = ['foreach', 'fused', 'per-tensor'] as const

const device = (kind: (typeof KINDS)[number]): EstimateDevice => ({
  name: kind,
  kind,
  vramBytes: 16 * 2 ** 30,
  fp16TensorTflops: kind === 'cpu' || kind === 'mps' ? null : 100,
  fp32Tflops: 10,
  memoryBandwidthGBs: 400,
  bf16: true,
  tf32: kind === 'cuda',
  computeCapability: kind === 'cuda' ? '8.0' : null,
})

describe("the optimizer step PyTorch's default runs on a device", () => {
  it('loops over the tensors on the CPU and MPS, and keeps every other step as asked', () => {
    for (const kind of KINDS) {
      for (const impl of IMPLS) {
        const expected = impl === 'foreach' && (kind === 'cpu' || kind === 'mps') ? 'per-tensor' : impl
        expect(optimizerStepOn(impl, device(kind)), `${impl} on ${kind}`).toBe(expected)
      }
    }
    for (const impl of IMPLS) expect(optimizerStepOn(impl, null)).toBe(impl)
  })

  it('is what `rigfit estimate --stack` and the planner both build for each device', () => {
    const model = findCatalogModel('gpt2')
    if (!model) throw new Error('the catalog has gpt2')
    for (const ref of ['plain@2.11', 'plain@1.13', 'hf@4.45']) {
      const stack = resolveStack(parseStackRef(ref, 'test', 'usage')).mechanisms
      for (const kind of KINDS) {
        const built = userEstimateInput({
          model,
          device: device(kind),
          settings: { seq: 256, microBatch: 2 },
          stack,
        })
        const onCuda = userEstimateInput({
          model,
          device: device('cuda'),
          settings: { seq: 256, microBatch: 2 },
          stack,
        })
        expect(built.optimizerImpl, `${ref} on ${kind}`).toBe(
          optimizerStepOn(onCuda.optimizerImpl, device(kind)),
        )
      }
    }
    const point = {
      model,
      seq: 256,
      microBatch: 2,
      gradAccum: 1,
      precision: 'fp32' as const,
      optimizer: 'adamw' as const,
      fusedOptimizer: false,
      gradCheckpointing: false,
      attention: 'sdpa' as const,
      gpus: 1,
      nodes: 1,
      sharding: 'none' as const,
      offload: 'none' as const,
      lora: null,
      quant: 'none' as const,
      tf32: false,
      compile: false,
    }
    for (const kind of KINDS) {
      expect(pointEstimateInput(point, device(kind), 'none').optimizerImpl, kind).toBe(
        kind === 'cpu' || kind === 'mps' ? 'per-tensor' : 'foreach',
      )
      expect(pointEstimateInput({ ...point, fusedOptimizer: true }, device(kind), 'none').optimizerImpl).toBe(
        'fused',
      )
    }
  })

  it('loops over the tensors for the CPU rows, whose stacks ask for the default step', () => {
    const cpuRows = loadValidationRows().filter((row) => row.gpu.kind === 'cpu')
    expect(cpuRows.map((row) => row.stack)).toContain('plain@2.11')
    for (const row of cpuRows) expect(validationInput(row).optimizerImpl, row.id).toBe('per-tensor')
  })
})
