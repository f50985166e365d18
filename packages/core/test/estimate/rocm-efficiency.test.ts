import { describe, expect, it } from 'vitest'
import { sustainedPeakShare } from '../../src/estimate/device-efficiency.js'
import { estimate, SHIPPED_TUNING } from '../../src/estimate/estimate.js'
import { rocmSustainedShare } from '../../src/estimate/rocm-efficiency.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { EstimateInput } from '../../src/schemas/index.js'

const GIB = 2 ** 30
/** The MI300X as the GPU catalog prices it, under a name of the caller's choosing. */
const instinct = (name: string) => ({
  name,
  kind: 'rocm' as const,
  vramBytes: 192 * GIB,
  fp16TensorTflops: 1307.4,
  fp32Tflops: 163.4,
  memoryBandwidthGBs: 5300,
  bf16: true,
  tf32: true,
  computeCapability: null,
})

describe("an AMD Instinct's share of the fitted matmul efficiency", () => {
  it("is its measured best BF16 GEMM's share of peak against the A100's, wherever the name comes from", () => {
    // The catalog's name, amd-smi's market name and a VM's virtual function all name the same chip.
    for (const name of ['Instinct MI300X', 'AMD Instinct MI300X', 'AMD Instinct MI300X VF']) {
      expect(rocmSustainedShare({ kind: 'rocm', name }), name).toBeCloseTo(0.514 / 0.869, 12)
    }
    expect(rocmSustainedShare({ kind: 'rocm', name: 'AMD Instinct MI325X' })).toBeCloseTo(0.604 / 0.869, 12)
    expect(rocmSustainedShare({ kind: 'rocm', name: 'AMD Instinct MI355X' })).toBeCloseTo(0.68 / 0.869, 12)
    // Newer Instincts reach more of their peak; every measured one less than the A100 does of its.
    const shares = ['MI300X', 'MI325X', 'MI355X'].map((name) => rocmSustainedShare({ kind: 'rocm', name }))
    expect([...shares].sort((a, b) => a - b)).toEqual(shares)
    for (const share of shares) expect(share).toBeLessThan(1)
  })

  it('leaves unmeasured AMD devices and every other kind at the whole efficiency', () => {
    for (const name of [
      'Instinct MI250X',
      'AMD Instinct MI210',
      'AMD Instinct MI300A',
      'Radeon RX 7900 XTX',
      'device',
    ]) {
      expect(rocmSustainedShare({ kind: 'rocm', name }), name).toBe(1)
    }
    for (const kind of ['cuda', 'mps', 'xpu', 'cpu'] as const) {
      expect(rocmSustainedShare({ kind, name: 'MI300X' }), kind).toBe(1)
      // An Apple GPU keeps its own MPS share (mps-efficiency.test.ts), never an Instinct's.
      if (kind !== 'mps') {
        const device = { kind, name: 'MI300X', computeCapability: null }
        expect(sustainedPeakShare(device, 0.8, 'bf16-mixed'), kind).toBe(1)
      }
    }
    expect(sustainedPeakShare({ ...instinct('AMD Instinct MI300X') }, 0.8, 'bf16-mixed')).toBeCloseTo(
      0.514 / 0.869,
      12,
    )
  })

  it("slows only the matrix work: a compute-bound step's time grows by less than the share's inverse", () => {
    const model = findCatalogModel('llama-3.1-8b')
    if (!model) throw new Error('llama-3.1-8b is in the catalog')
    for (const [seq, microBatch] of [
      [1024, 1],
      [2048, 4],
      [4096, 8],
    ] as const) {
      const step = (name: string) =>
        estimate(EstimateInput.parse({ model, seq, microBatch, device: instinct(name) }), SHIPPED_TUNING)
          .throughput?.stepSeconds ?? Number.NaN
      const ratio = step('AMD Instinct MI300X') / step('an unmeasured ROCm device')
      expect(ratio, `${seq} x ${microBatch}`).toBeGreaterThan(1)
      expect(ratio, `${seq} x ${microBatch}`).toBeLessThan(0.869 / 0.514)
    }
  })
})
