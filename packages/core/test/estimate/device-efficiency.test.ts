import { describe, expect, it } from 'vitest'
import { isHopper, sustainedPeakShare } from '../../src/estimate/device-efficiency.js'
import { validationInput } from '../../src/estimate/validation.js'
import { fitTuning, PRIOR_TUNING } from '../../src/estimate/validation-fit.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'

const cuda = (computeCapability: string | null) => ({
  kind: 'cuda' as const,
  computeCapability,
  name: 'device',
})

describe('the share of the peak a device sustains', () => {
  it('is the fitted share on Hopper (9.x) and the whole efficiency on boards nothing else measures', () => {
    for (const cc of ['9.0', '9.0a']) expect(sustainedPeakShare(cuda(cc), 0.8, 'bf16-mixed')).toBe(0.8)
    for (const cc of ['7.5', '8.0', '8.9', '10.0', null]) {
      expect(sustainedPeakShare(cuda(cc), 0.8, 'bf16-mixed')).toBe(1)
    }
    expect(isHopper({ kind: 'rocm', computeCapability: null })).toBe(false)
  })

  it('is fitted to Hopper rows only: without them it keeps its prior, with them it moves off it', () => {
    const speed = loadValidationRows().filter((r) => r.metric === 'tokens_per_second')
    const hopper = (r: (typeof speed)[number]) => isHopper(validationInput(r).device ?? cuda(null))
    expect(fitTuning(speed.filter((r) => !hopper(r))).hopperSustainedShare).toBe(
      PRIOR_TUNING.hopperSustainedShare,
    )
    expect(fitTuning(speed).hopperSustainedShare).toBeLessThan(PRIOR_TUNING.hopperSustainedShare)
  })
})
