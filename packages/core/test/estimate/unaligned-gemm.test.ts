import { describe, expect, it } from 'vitest'
import { estimate } from '../../src/estimate/estimate.js'
import { UNALIGNED_GEMM_SHARE, unalignedHeadExtraFlops } from '../../src/estimate/unaligned-gemm.js'
import { validationInput } from '../../src/estimate/validation.js'
import { MODEL_CATALOG } from '../../src/model/catalog.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'
import { type EstimateDevice, EstimateInput, Precision } from '../../src/schemas/index.js'

const decoders = MODEL_CATALOG.filter((m) => m.kind === 'decoder')
// Every CUDA GPU the validation dataset measured on, as its rows describe it.
const byName = new Map<string, EstimateDevice>()
for (const row of loadValidationRows()) {
  const device = validationInput(row).device
  if (device?.kind === 'cuda') byName.set(device.name, device)
}
const cudaDevices = () => [...byName.values()]

describe('an unaligned vocabulary head', () => {
  it('runs at the measured share of an aligned one: the same model with a vocabulary padded to 8 is faster', () => {
    for (const device of cudaDevices()) {
      for (const model of decoders.filter((m) => m.vocab % 8 !== 0)) {
        for (const precision of Precision.options) {
          const input = (vocab: number) =>
            EstimateInput.parse({
              model: { ...model, vocab },
              device,
              seq: 512,
              microBatch: 2,
              precision,
              compile: false,
            })
          const odd = estimate(input(model.vocab)).throughput?.stepSeconds ?? 0
          const padded = estimate(input(Math.ceil(model.vocab / 8) * 8)).throughput?.stepSeconds ?? 0
          const where = `${model.id} ${device.name} ${precision}`
          // fp32 GEMMs (without TF32) run on the CUDA cores, which need no alignment: the padded head's few more
          // FLOPs make it no faster. In 16 bits the unaligned head is slower despite its fewer FLOPs.
          if (precision === 'fp32') expect(odd, where).toBeLessThanOrEqual(padded)
          else expect(odd, where).toBeGreaterThan(padded)
        }
      }
    }
  })

  it('adds (1/share - 1) of the head GEMMs it runs in eager CUDA: three when the head trains, two when frozen', () => {
    for (const model of decoders) {
      for (const headTrains of [true, false]) {
        const extra = unalignedHeadExtraFlops(
          { model, head: 'lm', precision: 'bf16-mixed', device: cudaDevices()[0] ?? null, compile: false },
          headTrains,
        )
        const head = 2 * model.hidden * model.vocab * (headTrains ? 3 : 2)
        expect(extra, model.id).toBeCloseTo(
          model.vocab % 8 === 0 ? 0 : head * (1 / UNALIGNED_GEMM_SHARE - 1),
          0,
        )
      }
      const cpu = { ...(cudaDevices()[0] ?? {}), kind: 'cpu' } as EstimateInput['device']
      const onCpu = unalignedHeadExtraFlops(
        { model, head: 'lm', precision: 'bf16-mixed', device: cpu, compile: false },
        true,
      )
      const classifier = unalignedHeadExtraFlops(
        {
          model,
          head: 'classification',
          precision: 'bf16-mixed',
          device: cudaDevices()[0] ?? null,
          compile: false,
        },
        true,
      )
      // torch.compile pads the GEMM to aligned shapes (Inductor's pad_mm).
      const compiled = unalignedHeadExtraFlops(
        { model, head: 'lm', precision: 'bf16-mixed', device: cudaDevices()[0] ?? null, compile: true },
        true,
      )
      expect([onCpu, classifier, compiled], model.id).toEqual([0, 0, 0])
    }
  })
})
