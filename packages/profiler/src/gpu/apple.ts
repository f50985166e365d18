import type { Gpu } from '@rigfit/core'
import { appleGpuFamily, applePrecision } from '@rigfit/core'
import { RANGES } from '../parsers/limits.js'
import { sysctlNumber } from '../parsers/sysctl.js'
import type { MacDisplayGpu } from '../parsers/system-profiler.js'
import { gpuRecord } from './gpu-record.js'

const MIB = 1024 * 1024
const GIB = 1024 * MIB
const WIRED_LIMIT_MIB = { ...RANGES.memoryBytes, max: Math.floor(Number.MAX_SAFE_INTEGER / MIB), unit: 'MiB' }

/**
 * The share of unified memory the GPU may wire (its working set). `iogpu.wired_limit_mb` (macOS 14+) or
 * `debug.iogpu.wired_limit` (bytes, macOS 13) set it; 0 or absent means the macOS default, which Metal reports
 * as `recommendedMaxWorkingSetSize`: about two thirds of RAM up to 36 GiB and three quarters above. rigfit uses
 * exactly that rule: ramBytes × 2/3 when RAM ≤ 36 GiB, ramBytes × 3/4 otherwise.
 */
export function appleWorkingSetBytes(
  ramBytes: number,
  sysctl: Record<string, string>,
): { bytes: number; source: 'sysctl' | 'default' } {
  const limitMb = sysctlNumber(sysctl, 'iogpu.wired_limit_mb', WIRED_LIMIT_MIB)
  if (limitMb !== null && limitMb > 0) return { bytes: Math.min(ramBytes, limitMb * MIB), source: 'sysctl' }
  const limitBytes = sysctlNumber(sysctl, 'debug.iogpu.wired_limit', RANGES.memoryBytes)
  if (limitBytes !== null && limitBytes > 0)
    return { bytes: Math.min(ramBytes, limitBytes), source: 'sysctl' }
  const share = ramBytes <= 36 * GIB ? 2 / 3 : 3 / 4
  return { bytes: Math.floor(ramBytes * share), source: 'default' }
}

/**
 * GPUs of a Mac. Apple silicon: unified memory, VRAM = the working set above (never all RAM). Intel Macs'
 * discrete GPUs report dedicated VRAM; their integrated Intel GPU reports 0.
 */
export function macGpus(displays: MacDisplayGpu[], sysctl: Record<string, string>, ramBytes: number): Gpu[] {
  return displays.map((display, index) => {
    if (display.vendor === 'apple') {
      const metalFamily = appleGpuFamily(display.name)
      const workingSet = appleWorkingSetBytes(ramBytes, sysctl).bytes
      return gpuRecord({
        index,
        vendor: 'apple',
        name: display.cores ? `${display.name} (${display.cores}-core GPU)` : display.name,
        detectedBy: 'system_profiler',
        family: 'apple',
        arch: metalFamily,
        integrated: true,
        unifiedMemory: true,
        vramTotalBytes: workingSet,
        vramUsableBytes: workingSet,
        metalFamily: metalFamily ?? display.metalSupport,
        ...applePrecision(metalFamily),
        migMode: 'unsupported',
      })
    }
    const vram = display.vramBytes ?? 0
    return gpuRecord({
      index,
      vendor: display.vendor === 'other' ? 'other' : display.vendor,
      name: display.name,
      detectedBy: 'system_profiler',
      family: display.vendor === 'amd' ? 'rdna' : display.vendor === 'intel' ? 'intel' : 'unknown',
      integrated: display.vramBytes === null,
      unifiedMemory: false,
      vramTotalBytes: vram,
      vramUsableBytes: vram,
      metalFamily: display.metalSupport,
      fp16: 'yes',
      migMode: 'unsupported',
    })
  })
}
