import {
  communicationBytes,
  cudaContextBytes,
  decide,
  deriveFacts,
  deviceFromCatalogEntry,
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
import { catalogInterconnect, whatIfProfile } from '@rigfit/profiler'
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
 * Device memory a training step can use: the device's share of the board, less what the estimate charges before
 * any tensor, the CUDA/HIP context (larger from Hopper on) and, with several GPUs, NCCL's buffers (more channels
 * over NVLink than over PCIe). A card with the same VRAM but a larger context or a faster link holds less.
 */
function trainingBytes(e: GpuCatalogEntry, gpus: number): number {
  const device = deviceFromCatalogEntry(e)
  const interconnect = catalogInterconnect(e, gpus).kind
  return (
    device.vramBytes - cudaContextBytes(device) - communicationBytes({ gpus, nodes: 1, interconnect }, device)
  )
}

/** How fast a node's GPUs talk to each other: none (one GPU) < PCIe < NVLink / Infinity Fabric. */
const LINK_RANK: Record<string, number> = { none: 0, pcie: 1, nvlink: 2, xgmi: 2 }
const link = (e: GpuCatalogEntry, gpus: number) => LINK_RANK[catalogInterconnect(e, gpus).kind] ?? 0

/**
 * Whether the rule packs let `torch.compile` run on the device (a fine-tune of the first catalog model, balanced):
 * a pack turns it off where the stack has known problems (the W7900 and MI210 on ROCm), and compiled kernels are
 * part of the predicted speed, so a device without them is not at least as capable as one with them.
 */
export async function compiles(entry: GpuCatalogEntry): Promise<boolean> {
  const job = jobs().all[0] as Job
  const decisions = await decide(packs, deriveFacts(node(entry, 1), workloadOf(job), 'balanced'))
  return decisions.settings.compile?.value === true
}

/**
 * Whether `big`, `gpus` of them in a node, has at least the training memory (`trainingBytes`), compute, bandwidth and GPU link of `small`,
 * of the same vendor and family of software (packs differ by vendor), with at least its numeric formats and compute
 * capability. Power is not compared: the speed model reads a device's rate from its spec sheet, not from its TDP.
 */
export function dominates(big: GpuCatalogEntry, small: GpuCatalogEntry, gpus = 1): boolean {
  if (big.id === small.id || big.vendor !== small.vendor || big.unifiedMemory !== small.unifiedMemory)
    return false
  return (
    trainingBytes(big, gpus) >= trainingBytes(small, gpus) &&
    compute(big) >= compute(small) &&
    big.memoryBandwidthGBs >= small.memoryBandwidthGBs &&
    (SUPPORT[big.bf16] ?? 0) >= (SUPPORT[small.bf16] ?? 0) &&
    (SUPPORT[big.tf32] ?? 0) >= (SUPPORT[small.tf32] ?? 0) &&
    cc(big) >= cc(small) &&
    link(big, gpus) >= link(small, gpus)
  )
}

export type Planned = TrainingPlan | null

/**
 * The sweep's plans, each made once and shared by every comparison that needs it; `patch` adds workload fields a
 * sweep fixes per job (such as the `--seq` it asks).
 */
export function planCache(patch: (job: Job) => Partial<Workload> = () => ({})) {
  const plans = new Map<string, Promise<Planned>>()
  const planned = (entry: GpuCatalogEntry, gpus: number, job: Job): Promise<Planned> => {
    const key = `${entry.id} ${gpus} ${job.label}`
    let found = plans.get(key)
    if (!found) {
      found = planOf(node(entry, gpus), workloadOf(job, patch(job)), job.mode).then((p) =>
        isPlan(p) ? p : null,
      )
      plans.set(key, found)
    }
    return found
  }
  return { planned, size: () => plans.size }
}

export const rate = (p: TrainingPlan) => p.throughput.tokensPerSecond

export const describePlan = (p: TrainingPlan) =>
  `${p.settings.method} seq ${p.settings.seq} mb ${p.settings.microBatch} ${p.settings.strategy}/${p.settings.sharding}/${p.settings.offload} ckpt ${p.settings.gradCheckpointing} ${Math.round(rate(p))} tok/s`
