import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { evaluateValidationRow, parseValidationRow, validationInput } from '../../src/estimate/validation.js'
import { fitsSpeedConstants, fitTuning } from '../../src/estimate/validation-fit.js'
import { loadValidationRows, VALIDATION_DIR } from '../../src/node/validation-dataset.js'
import { selectTrainingDevices } from '../../src/plan/training-devices.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import { resolveStack } from '../../src/stack/resolve-stack.js'
import { parseStackRef } from '../../src/stack/stack-ref.js'

const rows = loadValidationRows()
const cpuRows = rows.filter((row) => row.gpu.kind === 'cpu')

/** Every row as written in its file, beside the row the schema parsed from it. */
const written = readdirSync(VALIDATION_DIR)
  .filter((file) => file.endsWith('.jsonl'))
  .flatMap((file) =>
    readFileSync(new URL(file, VALIDATION_DIR), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { settings: Record<string, unknown> }),
  )

describe('validation rows are scored with what the row states and its stack decides the rest', () => {
  it('leaves a setting the row does not state unstated, whatever the estimator defaults it to', () => {
    expect(written.length).toBe(rows.length)
    for (const raw of written) {
      const parsed = parseValidationRow(raw, 'row')
      for (const key of Object.keys(parsed.settings)) {
        expect(raw.settings, `${parsed.id}: ${key}`).toHaveProperty(key)
      }
    }
  })

  it("takes attention, TF32 and compile from the row's stack when the row does not name them", () => {
    for (const [index, row] of rows.entries()) {
      const raw = written[index]?.settings ?? {}
      const stack = resolveStack(parseStackRef(row.stack, row.id, 'validation')).mechanisms
      const input = validationInput(row)
      expect(input.attention, row.id).toBe(raw.attention ?? stack.attention)
      expect(input.tf32, row.id).toBe(raw.tf32 ?? stack.tf32)
      expect(input.compile, row.id).toBe(raw.compile ?? stack.compile)
    }
    // PyTorch 1.13 has no scaled_dot_product_attention: rigfit's trainer runs its eager attention there.
    for (const row of cpuRows) expect(validationInput(row).attention).toBe('eager')
  })
})

describe('the CPU rows measured by rigfit calibrate', () => {
  const profile = HardwareProfile.parse(
    JSON.parse(readFileSync(new URL('calibrate-cpu-amd-epyc.profile.json', VALIDATION_DIR), 'utf8')),
  )

  it('run on the device `rigfit estimate --from` builds from the measured machine’s profile', () => {
    expect(cpuRows.length).toBeGreaterThanOrEqual(4)
    const devices = selectTrainingDevices(profile)
    expect(devices.kind).toBe('cpu')
    const { vramBytes, ...device } = devices.estimateDevice
    for (const row of cpuRows) {
      const { vramGB, ...rest } = row.gpu
      // The peak is cores x clock x AVX-512 lanes, written to the digits its product has.
      expect({ ...rest, fp32Tflops: 0 }, row.id).toEqual({ ...device, fp32Tflops: 0 })
      expect(rest.fp32Tflops, row.id).toBeCloseTo(device.fp32Tflops, 12)
      expect(Math.round(vramGB * 2 ** 30), row.id).toBe(vramBytes)
      expect(row.stack, row.id).toBe('plain@1.13')
      expect(row.origin, row.id).toBe('calibrate')
    }
  })

  it('are scored, and do not move the GPU kernels’ fitted constants', () => {
    expect(cpuRows.some(fitsSpeedConstants)).toBe(false)
    // Held out by source, the CPU rows are predicted with the constants fitted to every other row: the shipped ones.
    const withoutCpu = fitTuning(rows.filter((row) => row.gpu.kind !== 'cpu'))
    expect(fitTuning(rows)).toEqual(withoutCpu)
    for (const row of cpuRows) {
      const outcome = evaluateValidationRow(row, withoutCpu)
      expect(outcome.metric, row.id).toBe('tokens_per_second')
      expect(outcome.predicted, row.id).toBeGreaterThan(0)
      expect(outcome.measured, row.id).toBe(row.value)
    }
  })
})
