import {
  decide,
  deriveFacts,
  findCatalogModel,
  type GpuCatalogEntry,
  generatePlan,
  type HardwareProfile,
  isRigfitError,
  type LoadedPack,
  listModels,
  MODES,
  type Mode,
  type TrainingPlan,
  WORKLOAD_SCHEMA_VERSION,
  type Workload,
} from '@rigfit/core'
import { whatIfProfile } from '@rigfit/profiler'
import { bundledCatalogEntries, bundledPacks } from '../helpers/bundled-plugins.js'

export const catalog: GpuCatalogEntry[] = bundledCatalogEntries()
export const packs: LoadedPack[] = bundledPacks()

export const GPU_COUNTS = [1, 2, 4, 8] as const
const METHODS = ['auto', 'full', 'lora', 'qlora'] as const

/** One point of the plan space: a workload in a mode, named by the flags that make it. */
export interface Job {
  label: string
  model: string
  method: (typeof METHODS)[number]
  mode: Mode
}

/**
 * The catalog models x methods x modes, every one of them (`all`), and a deterministic sample for the
 * hardware sweeps: every `stride`-th job of the full product, so each model, method and mode appears.
 */
export function jobs(): { all: Job[]; sample: (stride: number) => Job[] } {
  const all: Job[] = []
  for (const model of listModels().map((m) => m.id))
    for (const method of METHODS)
      for (const mode of MODES) all.push({ label: `${model} ${method} ${mode}`, model, method, mode })
  return { all, sample: (stride) => all.filter((_, i) => i % stride === 0) }
}

/** A fine-tune of 100M tokens, so every plan has a time to train it. */
export function workloadOf(job: Job, patch: Partial<Workload> = {}): Workload {
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: 'finetune',
    model: findCatalogModel(job.model) ?? null,
    method: job.method,
    frozenModels: [],
    datasetBytes: null,
    datasetTokens: 100_000_000,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: null,
    nodes: 1,
    ...patch,
  }
}

/** The node the sweeps plan for: the same host (RAM, CPUs) whatever the GPUs, so only the GPUs differ. */
export function node(entry: GpuCatalogEntry, gpus: number, ramGiB = 2048): HardwareProfile {
  return whatIfProfile({ gpu: entry, gpus, ramGiB, cpus: 128 }, catalog)
}

/** The plan `rigfit plan` makes for this profile and workload, or the fit error's code. */
export async function planOf(
  profile: HardwareProfile,
  workload: Workload,
  mode: Mode,
): Promise<TrainingPlan | { error: string; details: unknown }> {
  try {
    const decisions = await decide(packs, deriveFacts(profile, workload, mode))
    return generatePlan({
      profile,
      workload,
      mode,
      decisions,
      options: { createdAt: '2026-01-01T00:00:00Z' },
    })
  } catch (error) {
    if (!isRigfitError(error)) throw error
    return { error: error.code, details: error.details }
  }
}

export const isPlan = (p: TrainingPlan | { error: string }): p is TrainingPlan => !('error' in p)

/** Compute a device trains at: its dense 16-bit matrix rate, else fp32. */
const compute = (e: GpuCatalogEntry) => e.fp16TensorTflops ?? e.fp32Tflops
const SUPPORT: Record<string, number> = { no: 0, unknown: 0, emulated: 1, yes: 2 }
const cc = (e: GpuCatalogEntry) => Number.parseFloat(e.computeCapability) || 0

/**
 * Whether `big` has at least the memory, compute and bandwidth of `small`, of the same vendor and family of
 * software (packs differ by vendor), with at least its numeric formats and compute capability.
 */
export function dominates(big: GpuCatalogEntry, small: GpuCatalogEntry): boolean {
  if (big.id === small.id || big.vendor !== small.vendor || big.unifiedMemory !== small.unifiedMemory)
    return false
  return (
    big.vramGB / big.devicesPerBoard >= small.vramGB / small.devicesPerBoard &&
    compute(big) >= compute(small) &&
    big.memoryBandwidthGBs >= small.memoryBandwidthGBs &&
    (SUPPORT[big.bf16] ?? 0) >= (SUPPORT[small.bf16] ?? 0) &&
    (SUPPORT[big.tf32] ?? 0) >= (SUPPORT[small.tf32] ?? 0) &&
    cc(big) >= cc(small)
  )
}
