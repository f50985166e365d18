import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { hostCpuHasBf16, readHostCpuDevice } from '../../src/sampling/host-cpu-device.js'

const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url))
const ryzen = {
  procRoot: fixture('proc/ryzen-7950x-t0'),
  sysfsRoot: fixture('sysfs/ryzen-7950x-workstation'),
  memoryBytes: 64 * 1024 ** 3,
}

describe('readHostCpuDevice', () => {
  it('reads cores, AVX-512 and the boost clock of a Ryzen 9 7950X into an fp32 peak', () => {
    const host = readHostCpuDevice({ ...ryzen, availableCores: 32 })
    expect(host.physicalCores).toBe(16)
    expect(host.device).toMatchObject({
      name: 'AMD Ryzen 9 7950X 16-Core Processor',
      kind: 'cpu',
      vramBytes: 64 * 1024 ** 3,
      fp16TensorTflops: null,
      bf16: true,
      tf32: false,
      computeCapability: null,
    })
    // 16 cores x 5.881 GHz x 64 fp32 FLOPs per cycle (two 16-lane FMA units).
    expect(host.device.fp32Tflops).toBeCloseTo((16 * 5.881 * 64) / 1000, 6)
    expect(host.assumed).toEqual(['memory bandwidth (20 GB/s)'])
  })

  it('counts only the cores the process may use', () => {
    const host = readHostCpuDevice({ ...ryzen, availableCores: 4 })
    expect(host.device.fp32Tflops).toBeCloseTo((4 * 5.881 * 64) / 1000, 6)
  })

  it('falls back to what Node reports without /proc/cpuinfo and cpufreq', () => {
    const host = readHostCpuDevice({
      procRoot: fixture('missing'),
      sysfsRoot: fixture('missing'),
      memoryBytes: 1,
    })
    expect(host.device.name).toBe(cpus()[0]?.model ?? 'CPU')
    expect(host.physicalCores).toBe(Math.max(1, cpus().length))
    expect(host.device.fp32Tflops).toBeGreaterThan(0)
  })

  it('reads whether the CPU has bf16 instructions, as the planner counts them', () => {
    // The Zen 4 fixture lists avx512_bf16; a missing cpuinfo lists nothing.
    expect(hostCpuHasBf16(ryzen.procRoot)).toBe(true)
    expect(hostCpuHasBf16(fixture('missing'))).toBe(false)
  })
})
