import { realpath } from 'node:fs/promises'
import os from 'node:os'
import type { HardwareProfile } from '@rigfit/core'
import { mountFor } from '../linux/storage.js'
import type { ProfileProgressEvent } from '../probe-runner.js'
import { measureDisk } from './disk.js'
import { measureMemoryBandwidth } from './memory-bandwidth.js'
import { measureDownload } from './network.js'

export interface BenchmarkOptions {
  /** Directory for the disk test (default: the current directory, where datasets and checkpoints usually go). */
  dir?: string
  /** URL to estimate download bandwidth against; none (the default) leaves the network "not measured". */
  networkUrl?: string | null
  onProgress?: (event: ProfileProgressEvent) => void
}

const MIB = 1024 * 1024

/**
 * Memory bandwidth, sequential disk write/read and (with a target) download bandwidth, in that order, each with
 * its own time budget so that all of it ends within about 10 s. Returns a new profile with the figures and a
 * note per figure on how it was measured; a benchmark that fails leaves its figure null and says why.
 */
export async function runBenchmarks(
  profile: HardwareProfile,
  options: BenchmarkOptions = {},
): Promise<HardwareProfile> {
  const started = performance.now()
  const notes: string[] = []
  const progress = (stage: string, fraction: number, message: string) =>
    options.onProgress?.({ kind: 'benchmark', stage, fraction: Math.max(0, Math.min(1, fraction)), message })

  // Two buffers of this size must fit comfortably: an eighth of what is free, capped at 256 MiB.
  const bufferBytes = Math.max(
    16 * MIB,
    Math.min(256 * MIB, Math.floor(profile.memory.availableBytes / 8 / MIB) * MIB),
  )
  progress('memory', 0, 'memory bandwidth')
  const memory = await measureMemoryBandwidth({
    bufferBytes,
    onProgress: (f) => progress('memory', f, 'memory bandwidth'),
  })
  notes.push(`memory: ${memory.method}; best pass ${memory.bestGBs} GB/s`)

  const dir = await realpath(options.dir ?? process.cwd()).catch(() => options.dir ?? process.cwd())
  const storage = profile.storage.map((entry) => ({ ...entry }))
  const target = mountFor(storage, dir)
  const sizeBytes = Math.min(256 * MIB, Math.floor((target?.freeBytes ?? os.freemem()) / 4 / MIB) * MIB)
  try {
    if (sizeBytes < 16 * MIB) throw new Error(`less than 64 MiB free in ${dir}`)
    const disk = await measureDisk({
      dir,
      sizeBytes,
      onProgress: (stage, f) => progress(`disk ${stage}`, f, `disk ${stage} in ${dir}`),
    })
    if (target) {
      target.writeMBs = disk.writeMBs
      target.readMBs = disk.readMBs
    }
    notes.push(`disk${target ? ` (${target.mount})` : ''}: ${disk.method}`)
  } catch (error) {
    notes.push(`disk: not measured in ${dir}: ${(error as Error).message}`)
  }

  let network: HardwareProfile['network'] = { status: 'not-measured', downloadMbps: null, target: null }
  const url = options.networkUrl ?? null
  if (url) {
    progress('network', 0, `download from ${url}`)
    const result = await measureDownload(url, 2500, (f) => progress('network', f, `download from ${url}`))
    network = { status: result.status, downloadMbps: result.downloadMbps, target: url }
    notes.push(
      result.status === 'measured'
        ? `network: ${Math.round(result.bytes / 1024)} KiB downloaded from ${url} within 2.5 s`
        : `network: ${url} could not be measured: ${result.error}`,
    )
  } else {
    notes.push('network: not measured (no target configured: --network-url or RIGFIT_NETWORK_URL)')
  }
  progress('done', 1, 'benchmarks done')
  return {
    ...profile,
    memory: { ...profile.memory, bandwidthGBs: memory.gbs },
    storage,
    network,
    benchmark: { ran: true, ms: Math.round(performance.now() - started), notes },
  }
}
