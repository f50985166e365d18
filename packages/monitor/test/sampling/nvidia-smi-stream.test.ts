import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  MONITOR_NVIDIA_FIELDS,
  NvidiaSmiStream,
  type NvidiaSweep,
  nvidiaSmiStreamArgs,
} from '../../src/sampling/nvidia-smi-stream.js'

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url))
const env = (scenario: string | null) => ({
  ...process.env,
  PATH: `${fixtures}bin:${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
  ...(scenario ? { RIGFIT_FAKE_NVIDIA_SMI_SCENARIO: `${fixtures}nvidia-smi/${scenario}` } : {}),
})

function collect(stream: NvidiaSmiStream, count: number): Promise<NvidiaSweep[]> {
  const sweeps: NvidiaSweep[] = []
  return new Promise((resolve) => {
    stream.on('sweep', (sweep) => {
      sweeps.push(sweep)
      if (sweeps.length === count) resolve(sweeps)
    })
    stream.on('end', () => resolve(sweeps))
  })
}

describe('NvidiaSmiStream', () => {
  it('asks one looping nvidia-smi for the fields it needs', () => {
    expect(nvidiaSmiStreamArgs(250)).toEqual([
      `--query-gpu=${MONITOR_NVIDIA_FIELDS.join(',')}`,
      '--format=csv,noheader,nounits',
      '-lms',
      '250',
    ])
  })

  it('groups a recorded DGX A100 stream into sweeps and reports the GPU that fell off the bus', async () => {
    const stream = new NvidiaSmiStream({
      command: 'nvidia-smi',
      intervalMs: 60,
      env: env('dgx-a100-80gb-x2-replay.json'),
    })
    const done = collect(stream, 4)
    stream.start()
    const sweeps = await done
    stream.stop()
    expect(sweeps.map((s) => s.readings.map((r) => r.index))).toEqual([[0, 1], [0, 1], [0], [0]])
    expect(sweeps[0]?.readings[0]).toEqual({
      index: 0,
      name: 'NVIDIA A100-SXM4-80GB',
      vendor: 'nvidia',
      memoryUsedBytes: 61234 * 1024 ** 2,
      memoryTotalBytes: 81920 * 1024 ** 2,
      utilizationPercent: 100,
      temperatureC: 58,
      powerWatts: 392.17,
      powerLimitWatts: 400,
    })
    expect(sweeps[1]?.readings[1]?.powerWatts).toBeNull()
    expect(sweeps[2]?.problems).toEqual([
      'Unable to determine the device handle for GPU0000:47:00.0: Unknown Error',
    ])
  })

  it('reads a recorded H100 training session: one GPU, a sweep per line, memory and power as the run drew them', async () => {
    const stream = new NvidiaSmiStream({
      command: 'nvidia-smi',
      intervalMs: 20,
      env: env('h100-sxm5-train-replay.json'),
    })
    const done = collect(stream, 205)
    stream.start()
    const sweeps = await done
    stream.stop()
    expect(sweeps).toHaveLength(205)
    expect(sweeps.every((s) => s.readings.length === 1 && s.problems.length === 0)).toBe(true)
    const readings = sweeps.map((s) => s.readings[0])
    expect(readings[0]).toEqual({
      index: 0,
      name: 'NVIDIA H100 80GB HBM3',
      vendor: 'nvidia',
      memoryUsedBytes: 0,
      memoryTotalBytes: 81559 * 1024 ** 2,
      utilizationPercent: 0,
      temperatureC: 43,
      powerWatts: 130.14,
      powerLimitWatts: 700,
    })
    // The trainer's 37 GB allocation shows up in the stream, near the power limit at full load.
    const peakMemory = Math.max(...readings.map((r) => r?.memoryUsedBytes ?? 0))
    expect(peakMemory).toBe(37069 * 1024 ** 2)
    expect(Math.max(...readings.map((r) => r?.powerWatts ?? 0))).toBeGreaterThan(600)
  })

  it('says so when nvidia-smi fails to start or is missing', async () => {
    const failing = new NvidiaSmiStream({ command: 'nvidia-smi', intervalMs: 100, env: env(null) })
    const ended = new Promise((resolve) => failing.on('end', resolve))
    failing.start()
    expect(await ended).toMatchObject({
      code: 9,
      notFound: false,
      sweeps: 0,
      message: expect.stringMatching(/NVIDIA driver/),
    })

    const missing = new NvidiaSmiStream({ command: 'rigfit-no-nvidia-smi-here', intervalMs: 100 })
    const gone = new Promise((resolve) => missing.on('end', resolve))
    missing.start()
    expect(await gone).toMatchObject({ notFound: true })
  })
})
