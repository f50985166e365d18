import { describe, expect, it } from 'vitest'
import { SHIPPED_TUNING } from '../../src/estimate/estimate.js'
import { rocmSustainedShare } from '../../src/estimate/rocm-efficiency.js'
import { evaluateValidationRow } from '../../src/estimate/validation.js'
import { fitsSpeedConstants, fitTuning, leaveOneSourceOut } from '../../src/estimate/validation-fit.js'
import { deviceClass } from '../../src/estimate/validation-speed.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'

const rows = loadValidationRows()
const rocmSpeed = rows.filter((row) => row.gpu.kind === 'rocm' && row.metric === 'tokens_per_second')

describe('the AMD (ROCm) tokens/s rows', () => {
  it('are published measurements on an Instinct, counted in the amd class', () => {
    expect(rocmSpeed.length).toBeGreaterThanOrEqual(1)
    for (const row of rocmSpeed) {
      expect(deviceClass(row.gpu), row.id).toBe('amd')
      expect(row.origin, row.id).toBe('published')
      expect(row.unit, row.id).toBe('tokens/s/device')
    }
  })

  it('are scored, and do not move the CUDA kernels’ fitted constants', () => {
    expect(rocmSpeed.some(fitsSpeedConstants)).toBe(false)
    const withoutRocmSpeed = fitTuning(rows.filter((row) => !rocmSpeed.includes(row)))
    expect(fitTuning(rows)).toEqual(withoutRocmSpeed)
    // Nothing is fitted to them, so held out by source they read exactly as with the shipped constants.
    const heldOut = leaveOneSourceOut(rows)
      .flatMap((fold) => fold.outcomes)
      .filter((outcome) => rocmSpeed.includes(outcome.row))
    expect(heldOut).toHaveLength(rocmSpeed.length)
    for (const outcome of heldOut) {
      const shipped = evaluateValidationRow(outcome.row, SHIPPED_TUNING)
      expect(outcome.predicted, outcome.row.id).toBeCloseTo(shipped.predicted, 6)
      expect(outcome.measured, outcome.row.id).toBe(outcome.row.value)
    }
  })

  it("are read closer with the Instinct's measured GEMM share than at the whole efficiency", () => {
    for (const row of rocmSpeed) {
      const priced = evaluateValidationRow(row, SHIPPED_TUNING)
      const unmeasured = evaluateValidationRow(
        { ...row, gpu: { ...row.gpu, name: 'an unmeasured ROCm device' } },
        SHIPPED_TUNING,
      )
      expect(rocmSustainedShare({ kind: 'rocm', name: row.gpu.name }), row.id).toBeLessThan(1)
      expect(Math.abs(priced.error), row.id).toBeLessThan(Math.abs(unmeasured.error))
    }
  })
})
