import { type FuzzResult, fuzzReport, fuzzSettings, fuzzTimeoutMs, runTarget } from '@rigfit/fuzz-kit'
import { afterAll, describe, expect, it } from 'vitest'
import { TARGETS } from './targets.js'

/**
 * Every tool-output parser fed generated inputs: recorded outputs, mutated. 2,000 inputs each from a fixed seed
 * in the normal suite; `pnpm fuzz` runs 100,000 and prints the figures. Timings are printed, never asserted.
 */
const { runs, report } = fuzzSettings()
const results: FuzzResult[] = []

describe('fuzz: tool-output parsers', () => {
  it.each(TARGETS.map((target) => ({ name: target.name, target })))(
    '$name: no crash, nothing out of range',
    ({ target }) => {
      const result = runTarget(target, results)
      expect(result.inputs).toBe(runs)
      expect(result.crashes).toEqual([])
      expect(result.violations).toEqual([])
    },
    fuzzTimeoutMs(runs),
  )

  afterAll(() => {
    if (report) console.log(fuzzReport(results, 'parser'))
  })
})
