import type { Command } from '@oclif/core'
import {
  decide,
  deriveFacts,
  type EstimateDevice,
  type GpuCatalogEntry,
  type HardwareProfile,
  type InterconnectKind,
  type ModelSpec,
  matchGpu,
  type Quantization,
  trainingContext,
  unknownGpuError,
  WORKLOAD_SCHEMA_VERSION,
  type Workload,
} from '@rigfit/core'
import { whatIfProfile } from '@rigfit/profiler'
import { loadAllCatalogEntries } from './catalog.js'
import { resolvePlanningProfile } from './instance.js'
import { loadAllPacks } from './packs.js'

const GIB = 2 ** 30

/** The hardware flags of `rigfit estimate`, the same words `rigfit plan` uses for a what-if machine. */
export interface EstimateHardwareFlags {
  gpu?: string | undefined
  gpus?: number | undefined
  from?: string | undefined
  instance?: string | undefined
  vramBytes?: number | undefined
  ramBytes?: number | undefined
  rules?: string | undefined
}

/** The device an estimate runs on and what the planner would fix for it: link, optimizer step, TF32. */
export interface EstimateContext {
  profile: HardwareProfile
  device: EstimateDevice
  /** Data-parallel devices per node: --gpus, else all the profile's training GPUs (1 on the CPU). */
  gpus: number
  interconnect: InterconnectKind
  fusedOptimizer: boolean
  tf32: boolean
  compile: boolean
  /** Figures taken from defaults because the catalog has none. */
  assumedFigures: string[]
}

export interface EstimateWorkload {
  model: ModelSpec
  seq: number
  nodes: number
  lora: boolean
  quant: Quantization
}

/**
 * The machine an estimate describes, built the way `rigfit plan` builds it (a catalog GPU from `--gpu`, a cloud
 * preset, or a saved profile with the same overrides), and the planner's own choices for it: the devices'
 * figures, the GPU link, and the fused-optimizer and TF32 settings the rule packs decide. Null when no hardware
 * was named: the estimate is then memory alone.
 */
export async function resolveEstimateContext(
  command: Command,
  flags: EstimateHardwareFlags,
  workload: EstimateWorkload,
): Promise<EstimateContext | null> {
  if (flags.gpu === undefined && flags.from === undefined && flags.instance === undefined) return null
  const catalog = await loadAllCatalogEntries(command)
  const overrides = {
    ...(flags.gpus === undefined ? {} : { gpus: flags.gpus }),
    ...(flags.vramBytes === undefined ? {} : { vram: flags.vramBytes / GIB }),
    ...(flags.ramBytes === undefined ? {} : { ram: flags.ramBytes / GIB }),
  }
  const profile =
    flags.gpu !== undefined && flags.from === undefined
      ? whatIfProfile(
          {
            gpu: catalogGpu(flags.gpu, flags.vramBytes ?? flags.ramBytes ?? null, catalog),
            ...(flags.gpus === undefined ? {} : { gpus: flags.gpus }),
            ...(overrides.vram === undefined ? {} : { vramGiB: overrides.vram }),
            ...(overrides.ram === undefined ? {} : { ramGiB: overrides.ram }),
          },
          catalog,
        )
      : await resolvePlanningProfile(command, {
          ...overrides,
          ...(flags.gpu === undefined ? {} : { gpu: flags.gpu }),
          ...(flags.from === undefined ? {} : { from: flags.from }),
          ...(flags.instance === undefined ? {} : { instance: flags.instance }),
        })
  const { packs } = await loadAllPacks(command, { rulesDir: flags.rules })
  // The optimizer-step and TF32 rules read the hardware, not the mode; balanced is the plan `estimate` mirrors.
  const decisions = await decide(packs, deriveFacts(profile, workloadOf(workload), 'balanced'))
  const context = trainingContext(profile, decisions, flags.gpus ?? null)
  const { devices } = context
  return {
    profile,
    device: devices.estimateDevice,
    gpus: devices.kind === 'cpu' ? 1 : (flags.gpus ?? devices.gpus.length),
    interconnect: context.interconnect,
    fusedOptimizer: context.compute.fusedOptimizer,
    tf32: context.compute.tf32,
    compile: context.compute.compile,
    assumedFigures: devices.assumedFigures,
  }
}

function workloadOf(point: EstimateWorkload): Workload {
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: 'finetune',
    model: point.model,
    method: point.lora ? (point.quant === 'nf4' ? 'qlora' : 'lora') : 'full',
    frozenModels: [],
    datasetBytes: null,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: point.seq,
    nodes: point.nodes,
  }
}

/** The catalog entry `--gpu` names, or an input error naming it with the closest catalog names. */
function catalogGpu(query: string, memoryHint: number | null, entries: GpuCatalogEntry[]): GpuCatalogEntry {
  const match = matchGpu(query, memoryHint, entries)
  if (match) return match.entry
  throw unknownGpuError(query, entries, {
    code: 'E_GPU_UNKNOWN',
    flag: '--gpu',
    hint: 'Or give the memory alone with --vram GiB.',
  })
}
