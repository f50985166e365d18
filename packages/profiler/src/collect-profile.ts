import type { GpuCatalogEntry, HardwareProfile } from '@rigfit/core'
import { runBenchmarks } from './bench/run-benchmarks.js'
import { buildProfile } from './build-profile.js'
import { type CollectOptions, collectProbes } from './collect-probes.js'

export interface CollectProfileOptions extends CollectOptions {
  /** Also measure memory bandwidth, disk and (with a target) network; about 10 s at most. */
  benchmark?: boolean
  /** GPU catalog entries (from the plugins) used to name GPUs and fill spec-sheet facts. */
  catalog?: GpuCatalogEntry[]
  /** Directory for the disk benchmark (default: the current directory). */
  benchDir?: string
  /** Download target for the network estimate (default: RIGFIT_NETWORK_URL, else none). */
  networkUrl?: string | null
}

/** Detects this machine: every probe in parallel with a deadline, then the benchmarks when asked. */
export async function collectProfile(options: CollectProfileOptions = {}): Promise<HardwareProfile> {
  const started = performance.now()
  const collection = await collectProbes(options)
  const profile = buildProfile(collection, { catalog: options.catalog ?? [] })
  if (!options.benchmark) return profile
  const detectionMs = Math.round(performance.now() - started)
  const env = options.env ?? process.env
  const measured = await runBenchmarks(profile, {
    ...(options.benchDir ? { dir: options.benchDir } : {}),
    networkUrl: options.networkUrl ?? env.RIGFIT_NETWORK_URL ?? null,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  })
  measured.benchmark.notes.unshift(`detection took ${detectionMs} ms before the benchmarks`)
  return measured
}
