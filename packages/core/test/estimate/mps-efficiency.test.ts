import { describe, expect, it } from 'vitest'
import { deviceFromCatalogEntry } from '../../src/estimate/device.js'
import { sustainedPeakShare } from '../../src/estimate/device-efficiency.js'
import { estimate, SHIPPED_TUNING } from '../../src/estimate/estimate.js'
import { MAMF_SHARE } from '../../src/estimate/mamf.js'
import { mpsSustainedShare } from '../../src/estimate/mps-efficiency.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { EstimateInput, Precision } from '../../src/schemas/index.js'
import { workspacePlugins } from '../helpers/workspace-plugins.js'

const { catalog } = workspacePlugins()
const apple = catalog.filter((entry) => entry.vendor === 'apple')
const FP32 = 8482 / 10617 / MAMF_SHARE.a100Sxm
const SIXTEEN_BIT = 7824 / 10617 / MAMF_SHARE.a100Sxm

describe("an Apple GPU's share of the fitted matmul efficiency under MPS", () => {
  it("is MPS's best measured GEMM against the A100's: less in 16 bits, which run at the FP32 rate", () => {
    expect(apple.length).toBeGreaterThanOrEqual(10)
    for (const entry of apple) {
      const device = deviceFromCatalogEntry(entry)
      expect(device.kind, entry.name).toBe('mps')
      for (const precision of Precision.options) {
        const share = mpsSustainedShare(device, precision)
        expect(share, `${entry.name} ${precision}`).toBeCloseTo(precision === 'fp32' ? FP32 : SIXTEEN_BIT, 12)
        expect(sustainedPeakShare(device, SHIPPED_TUNING.hopperSustainedShare, precision)).toBe(share)
      }
    }
    expect(SIXTEEN_BIT).toBeLessThan(FP32)
    expect(FP32).toBeLessThan(1)
  })

  it('leaves every other kind of device at the whole efficiency', () => {
    for (const kind of ['cuda', 'rocm', 'xpu', 'cpu'] as const) {
      for (const precision of Precision.options) expect(mpsSustainedShare({ kind }, precision)).toBe(1)
    }
  })

  it("slows an Apple GPU's step by less than the share's inverse, as only its matrix work slows", () => {
    const model = findCatalogModel('smollm-135m')
    const m1Max = apple.find((entry) => entry.name.startsWith('Apple M1 Max'))
    if (!model || !m1Max) throw new Error('smollm-135m and the M1 Max are in the catalogs')
    const device = deviceFromCatalogEntry(m1Max)
    for (const precision of ['fp32', 'fp16-mixed'] as const) {
      for (const microBatch of [1, 4, 16]) {
        const fields = EstimateInput.parse({ model, seq: 1024, microBatch, precision, device })
        const withShare = estimate(fields, SHIPPED_TUNING).throughput?.stepSeconds ?? Number.NaN
        // The same step with the share undone: the matrix efficiency divided by it.
        const undone =
          estimate(fields, {
            ...SHIPPED_TUNING,
            matmulEfficiency: SHIPPED_TUNING.matmulEfficiency / mpsSustainedShare(device, precision),
          }).throughput?.stepSeconds ?? Number.NaN
        const ratio = withShare / undone
        expect(ratio, `${precision} x ${microBatch}`).toBeGreaterThan(1)
        expect(ratio, `${precision} x ${microBatch}`).toBeLessThan(1 / mpsSustainedShare(device, precision))
      }
    }
  })
})
