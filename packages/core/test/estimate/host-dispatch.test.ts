import { describe, expect, it } from 'vitest'
import { estimate, SHIPPED_TUNING } from '../../src/estimate/estimate.js'
import { hostDispatchSeconds } from '../../src/estimate/host-dispatch.js'
import { kernelsPerMicroStep, optimizerStepKernels } from '../../src/estimate/kernels.js'
import { validationInput } from '../../src/estimate/validation.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'
import type { EstimateInput } from '../../src/schemas/index.js'

const speedRows = loadValidationRows().filter((row) => row.metric === 'tokens_per_second')
const cpuRows = speedRows.filter((row) => row.gpu.kind === 'cpu')
const stepSeconds = (input: EstimateInput, kernelOverheadSeconds: number) =>
  estimate(input, { ...SHIPPED_TUNING, kernelOverheadSeconds }).throughput?.stepSeconds ?? Number.NaN

describe("the host's per-op dispatch cost", () => {
  it('is the per-op cost times the ops of every micro-batch and of the optimizer step', () => {
    for (const row of speedRows) {
      const input = validationInput(row)
      const ops = input.gradAccum * kernelsPerMicroStep(input) + optimizerStepKernels(input)
      expect(
        hostDispatchSeconds(input, { ...SHIPPED_TUNING, kernelOverheadSeconds: 2e-5 }),
        row.id,
      ).toBeCloseTo(ops * 2e-5, 12)
    }
  })

  it('lengthens the step of every device, the CPU included, by exactly that time', () => {
    expect(cpuRows.length).toBeGreaterThanOrEqual(7)
    for (const row of speedRows) {
      const input = validationInput(row)
      const added = stepSeconds(input, SHIPPED_TUNING.kernelOverheadSeconds) - stepSeconds(input, 0)
      expect(added, row.id).toBeGreaterThan(0)
      // Data-parallel scaling divides the whole step; on one device (every CPU row) the step grows by the dispatch.
      if (input.gpus * input.nodes === 1) {
        expect(added, row.id).toBeCloseTo(hostDispatchSeconds(input, SHIPPED_TUNING), 9)
      }
    }
  })

  it('is a larger share of a small model’s CPU step than of a 135M model’s', () => {
    const share = (row: (typeof cpuRows)[number]) => {
      const input = validationInput(row)
      return (
        hostDispatchSeconds(input, SHIPPED_TUNING) / stepSeconds(input, SHIPPED_TUNING.kernelOverheadSeconds)
      )
    }
    const small = cpuRows.filter((row) => row.source.id === 'devonbike-overfit').map(share)
    const large = cpuRows.filter((row) => row.source.id === 'calibrate-cpu-amd-epyc-2-vcpu').map(share)
    expect(Math.min(...small)).toBeGreaterThan(0.4)
    expect(Math.max(...large)).toBeLessThan(0.05)
  })
})
