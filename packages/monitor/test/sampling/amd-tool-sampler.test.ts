import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { systemClock, systemTimers } from '../../src/runtime/clock.js'
import { AmdToolSampler, findAmdTool } from '../../src/sampling/amd-tool-sampler.js'
import { type Sample, Sampler } from '../../src/sampling/sampler.js'

const toolsDir = fileURLToPath(new URL('../fixtures/amd-tools/', import.meta.url))
const MIB = 1024 * 1024
const pathWith = (dir: string) => `${toolsDir}${dir}:${process.env.PATH ?? ''}`

function sampler(bin: string, env: Record<string, string> = {}) {
  const found = findAmdTool({ PATH: pathWith(bin) })
  if (found === null) throw new Error(`no AMD tool in ${bin}`)
  return new AmdToolSampler(found, {
    intervalMs: 50,
    env: { ...process.env, PATH: pathWith(bin), ...env },
    clock: systemClock,
    timers: systemTimers,
  })
}

describe.runIf(process.platform !== 'win32')('AmdToolSampler (fake amd-smi and rocm-smi on PATH)', () => {
  it('finds amd-smi before rocm-smi, and neither on an empty PATH', () => {
    expect(findAmdTool({ PATH: pathWith('bin-amd-smi') })?.tool).toBe('amd-smi')
    expect(findAmdTool({ PATH: `${toolsDir}bin-rocm-smi` })?.tool).toBe('rocm-smi')
    expect(findAmdTool({ PATH: '' })).toBeNull()
  })

  it('reads amd-smi static (names, limits) and metric (memory, temperature, power) through the profiler parser', async () => {
    const sweep = await sampler('bin-amd-smi', { RIGFIT_FAKE_AMD_USED_MB: '4096' }).sweep()
    expect(sweep?.readings).toHaveLength(2)
    expect(sweep?.readings[0]).toMatchObject({
      index: 0,
      name: 'AMD Instinct MI300X',
      vendor: 'amd',
      memoryUsedBytes: 4096 * MIB,
      memoryTotalBytes: 196592 * MIB,
      temperatureC: 41,
      powerWatts: 142,
      powerLimitWatts: 750,
    })
  })

  it('reads rocm-smi --json', async () => {
    const sweep = await sampler('bin-rocm-smi').sweep()
    expect(sweep?.readings).toEqual([
      {
        index: 0,
        name: 'Navi 31 [Radeon RX 7900 XT/7900 XTX]',
        vendor: 'amd',
        memoryUsedBytes: 1044086784,
        memoryTotalBytes: 25753026560,
        utilizationPercent: null,
        temperatureC: 44,
        powerWatts: 19,
        powerLimitWatts: 327,
      },
    ])
  })

  it('is what the sampler uses when nvidia-smi is absent, and follows the readings as they change', async () => {
    const env = { ...process.env, PATH: pathWith('bin-amd-smi'), RIGFIT_FAKE_AMD_USED_MB: '1000' }
    const s = new Sampler({
      intervalMs: 50,
      nvidiaSmi: 'rigfit-no-such-nvidia-smi',
      procRoot: '/proc',
      sysfsRoot: `${toolsDir}no-sysfs`,
      useProcfs: false,
      env,
    })
    const seen: Sample[] = []
    const used = (mb: number) =>
      new Promise<Sample>((resolve) => {
        s.on('sample', (sample) => {
          seen.push(sample)
          if (sample.gpusFresh && sample.gpus[0]?.memoryUsedBytes === mb * MIB) resolve(sample)
        })
      })
    const first = used(1000)
    s.start()
    await s.ready
    expect((await first).gpuSource).toBe('amd-smi')
    env.RIGFIT_FAKE_AMD_USED_MB = '2000'
    const second = await used(2000)
    s.stop()
    expect(second.gpus.map((gpu) => gpu.index)).toEqual([0, 1])
    expect(seen.every((sample) => sample.gpuSource === 'amd-smi' || sample.gpus.length === 0)).toBe(true)
  })
})
