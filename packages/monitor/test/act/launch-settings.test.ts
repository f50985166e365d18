import { readFileSync } from 'node:fs'
import { TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import {
  deviceSelectionEnv,
  initialSettings,
  launchEnv,
  parseVisibleDevices,
} from '../../src/act/launch-settings.js'

const plan = TrainingPlan.parse(
  JSON.parse(
    readFileSync(new URL('../fixtures/plans/rtx4090-gpt2-124m-balanced.json', import.meta.url), 'utf8'),
  ),
)

describe('launch settings', () => {
  it('start from the plan, with flags winning', () => {
    expect(initialSettings(plan, {}, { device: 'cpu', gpus: 0 })).toEqual({
      device: 'cuda',
      gpus: 1,
      nodes: 1,
      microBatch: 8,
      gradAccum: 2,
      effectiveBatch: 16,
      gradCheckpointing: false,
      precision: 'bf16-mixed',
    })
    expect(
      initialSettings(plan, { microBatch: 2, precision: 'fp32' }, { device: 'cpu', gpus: 0 }),
    ).toMatchObject({
      microBatch: 2,
      gradAccum: 2,
      effectiveBatch: 4,
      precision: 'fp32',
    })
  })

  it('without a plan need --micro-batch and take the device from the samples', () => {
    expect(initialSettings(null, {}, { device: 'cuda', gpus: 2 })).toBeNull()
    expect(initialSettings(null, { microBatch: 4 }, { device: 'cuda', gpus: 2 })).toEqual({
      device: 'cuda',
      gpus: 2,
      nodes: 1,
      microBatch: 4,
      gradAccum: 1,
      effectiveBatch: 8,
      gradCheckpointing: false,
      precision: null,
    })
  })

  it('set every RIGFIT_* variable the monitor knows', () => {
    const settings = initialSettings(plan, { gradCheckpointing: true }, { device: 'cpu', gpus: 0 })
    expect(launchEnv(settings, 3, '/runs/a/plan.attempt-3.json')).toEqual({
      RIGFIT_ATTEMPT: '3',
      RIGFIT_PLAN_FILE: '/runs/a/plan.attempt-3.json',
      RIGFIT_MICRO_BATCH: '8',
      RIGFIT_GRAD_ACCUM: '2',
      RIGFIT_GRAD_CKPT: '1',
      RIGFIT_PRECISION: 'bf16-mixed',
      RIGFIT_DEVICE: 'cuda',
    })
    expect(launchEnv(null, 1, null)).toEqual({ RIGFIT_ATTEMPT: '1' })
    expect(
      launchEnv({ ...(settings as NonNullable<typeof settings>), precision: null }, 1, null).RIGFIT_PRECISION,
    ).toBeUndefined()
  })

  it('select devices by PCI order and read CUDA_VISIBLE_DEVICES', () => {
    expect(deviceSelectionEnv(null, 'nvidia')).toEqual({})
    expect(deviceSelectionEnv([0, 2], 'nvidia')).toEqual({
      CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
      CUDA_VISIBLE_DEVICES: '0,2',
    })
    expect(deviceSelectionEnv([], 'amd')).toEqual({
      CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
      CUDA_VISIBLE_DEVICES: '',
      HIP_VISIBLE_DEVICES: '',
    })
    expect(parseVisibleDevices(undefined)).toBeNull()
    expect(parseVisibleDevices('1, 3')).toEqual([1, 3])
    expect(parseVisibleDevices('')).toEqual([])
    expect(parseVisibleDevices('GPU-5b8f2c1e-7a43')).toBeNull()
  })
})
