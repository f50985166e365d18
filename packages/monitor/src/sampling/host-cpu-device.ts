import os from 'node:os'
import { join } from 'node:path'
import { cpuHasBf16, cpuPeakTflops, type EstimateDevice } from '@rigfit/core'
import { parseCpuinfo, trainingIsaFlags } from '@rigfit/profiler'
import { readNumber, readTrimmed } from './read-sysfs.js'

/** The planner's host memory bandwidth when a profile has not measured it (dual-channel DDR4). */
const ASSUMED_HOST_BANDWIDTH_GBS = 20

/** The CPU as the estimator's device, with the figures that had to be assumed. */
export interface HostCpuDevice {
  device: EstimateDevice
  /** For the CPU package's power draw. */
  physicalCores: number
  assumed: string[]
}

export interface HostCpuSources {
  procRoot: string
  sysfsRoot: string
  /** Memory the CPU trains in: the plan's usable host RAM. */
  memoryBytes: number
  /** Cores this process may run on (default: os.availableParallelism()). */
  availableCores?: number
}

/** Whether this machine's CPU has bf16 instructions, from /proc/cpuinfo's flags. */
export function hostCpuHasBf16(procRoot: string): boolean {
  const info = parseCpuinfo(readTrimmed(join(procRoot, 'cpuinfo')) ?? '')
  return cpuHasBf16(trainingIsaFlags(info.flags, process.arch))
}

/**
 * This machine's CPU as the estimator sees a training device, read when a failover moves training onto it: a
 * plan records the rates of its GPUs only. Cores and vector units come from /proc/cpuinfo, the clock from
 * cpufreq's maximum (else the fastest current clock), and the peak from them the way the planner computes it.
 */
export function readHostCpuDevice(sources: HostCpuSources): HostCpuDevice {
  const info = parseCpuinfo(readTrimmed(join(sources.procRoot, 'cpuinfo')) ?? '')
  const cpus = os.cpus()
  const assumed: string[] = []
  const logicalCores = Math.max(1, info.logicalCores || cpus.length)
  const physicalCores = info.physicalCores ?? logicalCores
  const maxKHz = readNumber(join(sources.sysfsRoot, 'devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq'))
  const currentMHz = info.currentMHz ?? (cpus[0]?.speed || null)
  if (maxKHz === null && currentMHz === null) assumed.push('CPU clock')
  const flags = trainingIsaFlags(info.flags, process.arch)
  const brand = info.brand ?? cpus[0]?.model ?? 'CPU'
  const fp32Tflops = cpuPeakTflops({
    vendor: info.vendor ?? 'unknown',
    brand,
    arch: process.arch,
    physicalCores,
    logicalCores,
    usableCores: Math.min(logicalCores, sources.availableCores ?? os.availableParallelism()),
    baseGHz: currentMHz === null ? null : currentMHz / 1000,
    boostGHz: maxKHz === null || maxKHz <= 0 ? null : maxKHz / 1e6,
    flags,
    numaNodes: 1,
    temperatureC: null,
  })
  assumed.push(`memory bandwidth (${ASSUMED_HOST_BANDWIDTH_GBS} GB/s)`)
  return {
    device: {
      name: brand,
      kind: 'cpu',
      vramBytes: sources.memoryBytes,
      fp16TensorTflops: null,
      fp32Tflops: Math.max(fp32Tflops, 0.01),
      memoryBandwidthGBs: ASSUMED_HOST_BANDWIDTH_GBS,
      bf16: cpuHasBf16(flags),
      tf32: false,
      computeCapability: null,
    },
    physicalCores,
    assumed,
  }
}
