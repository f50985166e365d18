import { describe, expect, it } from 'vitest'
import { deviceFromCatalogEntry } from '../../src/estimate/device.js'
import { sustainedPeakShare } from '../../src/estimate/device-efficiency.js'
import { estimate, SHIPPED_TUNING } from '../../src/estimate/estimate.js'
import { MAMF_SHARE } from '../../src/estimate/mamf.js'
import { nvidiaSustainedShare } from '../../src/estimate/nvidia-sustained-share.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { EstimateInput } from '../../src/schemas/index.js'
import { workspacePlugins } from '../helpers/workspace-plugins.js'

const HOPPER = SHIPPED_TUNING.hopperSustainedShare
const T4_SHARE = 24 / 65 / MAMF_SHARE.a100Sxm
const { catalog } = workspacePlugins()

describe("an NVIDIA board's measured share of the fitted matmul efficiency", () => {
  it("is the T4's power-capped GEMM rate against the A100's best, under every name the T4 goes by", () => {
    for (const name of ['Tesla T4', 'NVIDIA T4', 't4']) {
      expect(nvidiaSustainedShare({ kind: 'cuda', name }, HOPPER), name).toBeCloseTo(T4_SHARE, 12)
    }
    expect(T4_SHARE).toBeGreaterThan(0.4)
    expect(T4_SHARE).toBeLessThan(0.45)
  })

  it("is Hopper's fitted share scaled by each Blackwell GPU's measured best GEMM against the H100's", () => {
    const share = (name: string) => nvidiaSustainedShare({ kind: 'cuda', name }, HOPPER)
    expect(share('NVIDIA B200')).toBeCloseTo((HOPPER * 0.776) / 0.803, 12)
    expect(share('B300')).toBeCloseTo((HOPPER * 0.786) / 0.803, 12)
    expect(share('NVIDIA GB200')).toBeCloseTo((HOPPER * 0.729) / 0.803, 12)
    // It follows the fitted share, whatever that is.
    expect(nvidiaSustainedShare({ kind: 'cuda', name: 'B200' }, 0.5)).toBeCloseTo((0.5 * 0.776) / 0.803, 12)
    for (const name of ['B200', 'B300', 'GB200']) expect(share(name), name).toBeLessThan(HOPPER)
  })

  it('leaves every other catalog GPU, and every other kind of device, at what it had', () => {
    const measured = /^(Tesla T4|B200|B300|GB200)$/
    expect(catalog.filter((entry) => measured.test(entry.name)).length).toBeGreaterThanOrEqual(3)
    for (const entry of catalog) {
      const device = deviceFromCatalogEntry(entry)
      const share = nvidiaSustainedShare(device, HOPPER)
      if (measured.test(entry.name)) expect(share, entry.name).toBeLessThan(1)
      else expect(share, entry.name).toBe(1)
      // The whole share: Hopper's fit, an Instinct's or these measurements, never above the whole efficiency.
      for (const precision of ['fp32', 'bf16-mixed'] as const) {
        expect(sustainedPeakShare(device, HOPPER, precision), entry.name).toBeLessThanOrEqual(1)
      }
    }
    for (const kind of ['rocm', 'mps', 'xpu', 'cpu'] as const) {
      expect(nvidiaSustainedShare({ kind, name: 'Tesla T4' }, HOPPER), kind).toBe(1)
    }
  })

  it("slows only a step's matrix work: a T4 step grows by less than the share's inverse", () => {
    const t4 = catalog.find((entry) => entry.name === 'Tesla T4')
    const model = findCatalogModel('llama-3.2-1b')
    if (!t4 || !model) throw new Error('the T4 and llama-3.2-1b are in the catalogs')
    const capped = deviceFromCatalogEntry(t4)
    for (const lora of [null, { rank: 16, targets: ['q', 'k', 'v', 'o'] }]) {
      for (const [seq, microBatch] of [
        [512, 1],
        [1024, 4],
        [2048, 8],
      ] as const) {
        const step = (name: string) =>
          estimate(
            EstimateInput.parse({
              model,
              seq,
              microBatch,
              precision: 'fp16-mixed',
              lora,
              device: { ...capped, name },
            }),
            SHIPPED_TUNING,
          ).throughput?.stepSeconds ?? Number.NaN
        const ratio = step('Tesla T4') / step('an unmeasured Turing board')
        expect(ratio, `${seq} x ${microBatch}`).toBeGreaterThan(1)
        expect(ratio, `${seq} x ${microBatch}`).toBeLessThan(1 / T4_SHARE)
      }
    }
  })
})
