import type { LaunchSettings } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { DEFAULT_MONITOR_OPTIONS } from '../../src/options.js'
import { planRelaunch, type RelaunchInput } from '../../src/run/relaunch-plan.js'

const settings: LaunchSettings = {
  device: 'cuda',
  gpus: 2,
  nodes: 1,
  microBatch: 4,
  gradAccum: 2,
  effectiveBatch: 16,
  gradCheckpointing: false,
  precision: 'bf16-mixed',
}
const input: RelaunchInput = {
  cause: 'crash',
  exit: { code: 1, signal: null },
  actions: { ...DEFAULT_MONITOR_OPTIONS.actions },
  settings,
  computeCapability: '8.9',
  inUse: [0, 1],
  visibleDevices: null,
  lostDevices: [],
  deviceErrorIndex: null,
}

describe('planRelaunch', () => {
  it('relaunches a crash or a hang unchanged, unless crash restarts are off', () => {
    expect(planRelaunch(input)).toMatchObject({ kind: 'relaunch', changed: false, settings })
    expect(planRelaunch({ ...input, cause: 'hang' })).toMatchObject({ kind: 'relaunch', changed: false })
    const off = planRelaunch({ ...input, actions: { ...input.actions, crashRestart: false } })
    expect(off).toMatchObject({ kind: 'fail', skipped: { cause: 'crash' } })
    if (off.kind === 'fail') expect(off.reason).toMatch(/--no-crash-restart/)
  })

  it('climbs the OOM ladder, or says why it cannot', () => {
    expect(planRelaunch({ ...input, cause: 'gpu-oom' })).toMatchObject({
      kind: 'relaunch',
      changed: true,
      settings: { microBatch: 2, gradAccum: 4 },
    })
    expect(
      planRelaunch({
        ...input,
        cause: 'host-oom-kill',
        exit: { code: null, signal: 'SIGKILL' },
        settings: null,
      }),
    ).toMatchObject({
      kind: 'fail',
      skipped: null,
    })
    const exhausted = { ...settings, microBatch: 1, gradAccum: 8, gradCheckpointing: true }
    expect(planRelaunch({ ...input, cause: 'gpu-oom', settings: exhausted })).toMatchObject({
      kind: 'stop',
      cause: 'recovery-exhausted',
    })
  })

  it('drops a lost GPU, or the one a device error names through CUDA_VISIBLE_DEVICES', () => {
    expect(planRelaunch({ ...input, cause: 'device-lost', lostDevices: [1] })).toMatchObject({
      kind: 'relaunch',
      visible: [0],
      settings: { gpus: 1, gradAccum: 4, effectiveBatch: 16 },
    })
    // The trainer saw GPUs 2 and 5 as cuda:0 and cuda:1; "cuda:1" is physical GPU 5.
    expect(
      planRelaunch({
        ...input,
        cause: 'device-error',
        inUse: [2, 5],
        visibleDevices: [2, 5],
        deviceErrorIndex: 1,
      }),
    ).toMatchObject({
      visible: [2],
    })
    expect(planRelaunch({ ...input, cause: 'device-error', deviceErrorIndex: null })).toMatchObject({
      kind: 'relaunch',
      changed: false,
      warnings: [expect.stringMatching(/could not be identified/)],
    })
    expect(
      planRelaunch({
        ...input,
        cause: 'device-lost',
        inUse: [0],
        lostDevices: [0],
        settings: { ...settings, gpus: 1 },
      }),
    ).toMatchObject({
      visible: [],
      settings: { device: 'cpu', gpus: 0 },
      warnings: [expect.stringMatching(/CPU/)],
    })
  })
})
