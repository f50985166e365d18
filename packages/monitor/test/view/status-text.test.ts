import { describe, expect, it } from 'vitest'
import type { Sample } from '../../src/sampling/sampler.js'
import { formatCount, formatDuration } from '../../src/view/format.js'
import { renderStatusLine, renderStatusLines, type ViewState } from '../../src/view/status-text.js'

const GIB = 1024 ** 3
const sample: Sample = {
  time: new Date(0),
  gpus: [
    {
      index: 0,
      name: 'NVIDIA GeForce RTX 4090',
      vendor: 'nvidia',
      memoryUsedBytes: 18 * GIB,
      memoryTotalBytes: 24 * GIB,
      utilizationPercent: 98,
      temperatureC: 72,
      powerWatts: 310.4,
      powerLimitWatts: 450,
    },
  ],
  gpuSource: 'nvidia-smi',
  gpusFresh: true,
  problems: [],
  cpu: { utilizationPercent: 34 },
  memory: { usedBytes: 21 * GIB, totalBytes: 64 * GIB },
  battery: null,
}
const state: ViewState = {
  command: ['python', 'train.py'],
  attempt: 2,
  maxAttempts: 4,
  elapsedSeconds: 4331,
  pausedBy: [],
  sample,
  predictedBytes: 19 * GIB,
  inUse: [0],
  progress: {
    step: 1200,
    totalSteps: 5000,
    loss: 2.314,
    learningRate: 3e-4,
    epoch: null,
    tokens: null,
    tokensPerSecond: 12400,
    samplesPerSecond: 48.1,
    stepSeconds: 1.23,
    etaSeconds: 4674,
    checkpointSeconds: null,
  },
  settings: {
    device: 'cuda',
    gpus: 1,
    nodes: 1,
    microBatch: 4,
    gradAccum: 8,
    effectiveBatch: 32,
    gradCheckpointing: true,
    precision: 'bf16-mixed',
  },
}

describe('status text', () => {
  it('shows memory against the plan, device readings, host and training progress', () => {
    const lines = renderStatusLines(state)
    expect(lines[0]).toBe('rigfit monitor  attempt 2/4  1h12m  running  batch 4x8=32 ckpt bf16-mixed')
    expect(lines[1]).toBe(
      'GPU0 NVIDIA GeForce RTX 4090  mem 18.0/24.0 GiB [########..] plan 19.0  util 98%  72°C  310/450 W',
    )
    expect(lines[2]).toBe('CPU 34%  RAM 21.0/64.0 GiB')
    expect(lines[3]).toBe('step 1200/5000  loss 2.3140  12.4k tok/s  48.1 samples/s  1.23 s/step  ETA 1h17m')
  })

  it('says why it is paused, and fits one line for logs', () => {
    expect(renderStatusLines({ ...state, pausedBy: ['GPU0 at 88°C is above --max-temp 85°C'] })[0]).toMatch(
      /PAUSED: GPU0 at 88°C/,
    )
    expect(renderStatusLine(state)).toBe(
      '[rigfit] 1h12m attempt 2 | step 1200/5000  loss 2.3140  12.4k tok/s  48.1 samples/s  1.23 s/step  ETA 1h17m | GPU0 18.0/24.0 GiB (plan 19.0) 98% 72°C 310 W | CPU 34%  RAM 21.0/64.0 GiB',
    )
  })

  it('formats durations and counts compactly', () => {
    expect([formatDuration(42), formatDuration(185), formatDuration(90061), formatDuration(null)]).toEqual([
      '42s',
      '3m05s',
      '1d01h',
      '?',
    ])
    expect([formatCount(950), formatCount(12_400), formatCount(3_100_000), formatCount(1.234)]).toEqual([
      '950',
      '12.4k',
      '3.1M',
      '1.23',
    ])
  })
})
