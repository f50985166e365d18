import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { cpuHasBf16 } from '../../src/device/capabilities.js'
import { evaluateValidationRow, parseValidationRow, validationInput } from '../../src/estimate/validation.js'
import { fitsSpeedConstants, fitTuning } from '../../src/estimate/validation-fit.js'
import { loadValidationRows, VALIDATION_DIR } from '../../src/node/validation-dataset.js'
import { cpuPeakTflops } from '../../src/plan/cpu-peak.js'
import { selectTrainingDevices } from '../../src/plan/training-devices.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import { resolveStack } from '../../src/stack/resolve-stack.js'
import { parseStackRef } from '../../src/stack/stack-ref.js'

const rows = loadValidationRows()
const cpuRows = rows.filter((row) => row.gpu.kind === 'cpu')
/** The rows `rigfit calibrate` measured on the machine whose profile is kept beside them. */
const calibratedCpuRows = cpuRows.filter((row) => row.source.id === 'calibrate-cpu-amd-epyc-2-vcpu')

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
    for (const row of calibratedCpuRows) expect(validationInput(row).attention).toBe('eager')
  })
})

describe('the CPU rows measured by rigfit calibrate', () => {
  const profile = HardwareProfile.parse(
    JSON.parse(readFileSync(new URL('calibrate-cpu-amd-epyc.profile.json', VALIDATION_DIR), 'utf8')),
  )

  it('run on the device `rigfit estimate --from` builds from the measured machine’s profile', () => {
    expect(calibratedCpuRows.length).toBeGreaterThanOrEqual(4)
    const devices = selectTrainingDevices(profile)
    expect(devices.kind).toBe('cpu')
    const { vramBytes, ...device } = devices.estimateDevice
    for (const row of calibratedCpuRows) {
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

describe('the published CPU rows (DevOnBike/Overfit, PyTorch 2.11 on a Ryzen 9 9950X3D)', () => {
  const published = cpuRows.filter((row) => row.source.id === 'devonbike-overfit')
  // The part as `rigfit profile` would describe it: 16 Zen 5 cores, 32 threads, 4.3 / 5.7 GHz, AVX-512 with bf16.
  const ryzen = {
    vendor: 'AuthenticAMD',
    brand: 'AMD Ryzen 9 9950X3D 16-Core Processor',
    arch: 'x64',
    physicalCores: 16,
    logicalCores: 32,
    usableCores: 32,
    baseGHz: 4.3,
    boostGHz: 5.7,
    flags: { avx2: true, avx512: true, avx512bf16: true, amx: false, fma: true, neon: false },
    numaNodes: 1,
    temperatureC: null,
  }

  it('run on the device rigfit builds for that CPU: cores x boost clock x AVX-512 lanes, two DDR5-5600 channels', () => {
    expect(published).toHaveLength(3)
    for (const row of published) {
      expect(row.gpu.name, row.id).toBe(ryzen.brand)
      expect(row.gpu.fp32Tflops, row.id).toBeCloseTo(cpuPeakTflops(ryzen), 12)
      expect(row.gpu.bf16, row.id).toBe(cpuHasBf16(ryzen.flags))
      expect(row.gpu.memoryBandwidthGBs, row.id).toBeCloseTo((2 * 8 * 5600) / 1000, 12)
      expect([row.gpu.fp16TensorTflops, row.gpu.tf32, row.gpu.computeCapability], row.id).toEqual([
        null,
        false,
        null,
      ])
    }
  })

  it('hold the published step times as tokens/s: micro-batch x 128 tokens over the milliseconds the page gives', () => {
    const page = '17.9 / 29.1 / 52.8 ms at batch 8 / 16 / 32'
    for (const row of published) {
      expect(row.source.says, row.id).toContain(page)
      const ms = page.split(' ms')[0]?.split(' / ')[[8, 16, 32].indexOf(row.settings.microBatch)]
      expect(ms, row.id).toBeDefined()
      expect(row.settings.seq, row.id).toBe(128)
      expect(row.value, row.id).toBeCloseTo((row.settings.microBatch * 128) / (Number(ms) / 1000), 9)
      expect(validationInput(row).precision, row.id).toBe('fp32')
      expect(validationInput(row).attention, row.id).toBe('sdpa')
    }
  })
})
