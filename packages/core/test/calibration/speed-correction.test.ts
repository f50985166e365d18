import { describe, expect, it } from 'vitest'
import {
  CALIBRATION_BOUNDS,
  correctSpeed,
  deviceFingerprint,
} from '../../src/calibration/speed-correction.js'
import { CalibrationRecord, type CalibrationSettings } from '../../src/schemas/calibration-record.js'

const HERE = deviceFingerprint('cpu', 'Intel(R) Xeon(R)  Processor', 2)
const SETTINGS: CalibrationSettings = {
  modelFamily: 'llama',
  params: 5_000_000,
  seq: 128,
  microBatch: 8,
  gradAccum: 2,
  precision: 'fp32',
  method: 'full',
  gradCheckpointing: false,
  threads: 2,
  gpus: 0,
  nodes: 1,
}

function record(
  measured: number,
  predicted: number,
  overrides: {
    settings?: Partial<CalibrationSettings>
    at?: string
    fingerprint?: string
    stack?: string
  } = {},
): CalibrationRecord {
  return CalibrationRecord.parse({
    schemaVersion: 1,
    recordedAt: overrides.at ?? '2026-01-01T00:00:00.000Z',
    source: 'calibrate',
    device: {
      fingerprint: overrides.fingerprint ?? HERE,
      kind: 'cpu',
      name: 'Intel(R) Xeon(R) Processor',
      count: 2,
    },
    stack: { name: overrides.stack ?? 'plain', version: null },
    versions: { torch: '1.13.1' },
    settings: { ...SETTINGS, ...overrides.settings },
    measured: {
      tokensPerSecond: measured,
      stepSeconds: 1,
      steps: 10,
      seconds: 10,
      peakAllocatedBytes: null,
      peakReservedBytes: null,
    },
    predicted: { tokensPerSecond: predicted, rigfitVersion: '0.1.0' },
  })
}

const query = (settings: Partial<CalibrationSettings> = {}, stack: string | null = 'plain') => ({
  fingerprint: HERE,
  stack,
  settings: { ...SETTINGS, ...settings },
})

describe('correctSpeed', () => {
  it('normalises the fingerprint text, so a brand printed with doubled spaces is the same machine', () => {
    expect(HERE).toBe('cpu:Intel(R) Xeon(R) Processor:2')
  })

  it('leaves the prediction, labelled predicted, without records of this device and stack', () => {
    const others = [
      record(1000, 5000, { fingerprint: deviceFingerprint('cuda', 'NVIDIA H100', 1) }),
      record(1000, 5000, { stack: 'hf' }),
    ]
    for (const records of [[], others]) {
      const out = correctSpeed(records, query(), 5000)
      expect(out.tokensPerSecond).toBe(5000)
      expect(out.calibration).toMatchObject({ label: 'predicted', factor: 1, match: 'none', records: [] })
    }
  })

  it('takes the median of the newest measurements of the very settings as the speed, labelled measured', () => {
    const records = [900, 1100, 1000, 5000].map((tps, i) =>
      record(tps, 4000, { at: `2026-01-0${i + 1}T00:00:00.000Z` }),
    )
    const out = correctSpeed(records, query(), 8000)
    expect(out.calibration.label).toBe('measured on this machine')
    expect(out.calibration.match).toBe('settings')
    expect(out.tokensPerSecond).toBeCloseTo(1050, 6)
    expect(out.calibration.factor).toBeCloseTo(1050 / 8000, 9)
    expect(out.calibration.records[0]?.recordedAt).toBe('2026-01-04T00:00:00.000Z')
  })

  it('scales by the ratio of the nearest records of the same family when the settings differ', () => {
    const near = record(2000, 10_000, { settings: { microBatch: 4 } })
    const far = record(3000, 3000, { settings: { params: 900_000_000 } })
    const otherFamily = record(9000, 1000, { settings: { modelFamily: 'gpt2' } })
    const out = correctSpeed([near, far, otherFamily], query({ seq: 256 }), 6000)
    expect(out.calibration.match).toBe('family')
    expect(out.calibration.label).toBe('predicted')
    // median of the two llama ratios 0.2 and 1.0
    expect(out.calibration.factor).toBeCloseTo(0.6, 9)
    expect(out.tokensPerSecond).toBeCloseTo(3600, 6)
    expect(out.calibration.records.map((r) => r.modelFamily)).toEqual(['llama', 'llama'])
  })

  it('bounds the factor by how near the records are', () => {
    for (const [match, settings] of [
      ['family', { seq: 512 }],
      ['device', { modelFamily: 'gpt2' }],
    ] as const) {
      const [low, high] = CALIBRATION_BOUNDS[match]
      for (const ratio of [1e-4, 1e4]) {
        const out = correctSpeed([record(ratio * 1000, 1000)], query(settings), 1000)
        expect(out.calibration.match).toBe(match)
        expect(out.calibration.factor).toBe(ratio < 1 ? low : high)
        expect(out.calibration.reason).toMatch(/bounded from/)
      }
    }
  })

  it('reads any stack when the query names none', () => {
    const out = correctSpeed([record(500, 1000, { stack: 'hf' })], query({}, null), 2000)
    expect(out.calibration.match).toBe('settings')
    expect(out.tokensPerSecond).toBe(500)
  })
})
