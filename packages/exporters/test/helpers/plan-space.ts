import { createRequire } from 'node:module'
import {
  CLOUD_PRESETS,
  computeCapabilityNumber,
  type Decisions,
  decide,
  deriveFacts,
  type Facts,
  findCatalogModel,
  type GpuCatalogEntry,
  generatePlan,
  type HardwareProfile,
  isRigfitError,
  type LoadedPack,
  type Mode,
  type TrainingPlan,
  WORKLOAD_SCHEMA_VERSION,
  type Workload,
} from '@rigfit/core'
import { type BUNDLED_PLUGINS, loadBundledPlugins } from '@rigfit/core/node'
import { presetProfile, whatIfProfile } from '@rigfit/profiler'

const bundled = loadBundledPlugins(createRequire(import.meta.url).resolve)

/** The bundled plugins' names (`@rigfit/plugin-<name>`), in the order the CLI loads them. */
type ShortName<T> = T extends `@rigfit/plugin-${infer Name}` ? Name : never
type PluginName = ShortName<(typeof BUNDLED_PLUGINS)[number]>

/** Each plugin's catalog.json (the cpu plugin has none), as the CLI reads them. */
export const CATALOGS = bundled.catalogs as Readonly<Record<PluginName, GpuCatalogEntry[]>>

/** Every catalog entry of the bundled plugins, the list `--gpu NAME` resolves against. */
export const ALL_GPUS: GpuCatalogEntry[] = bundled.catalog

/** The packs `rigfit plan` runs: core's defaults and every bundled plugin's pack, as vendor packs. */
export const PACKS: LoadedPack[] = bundled.packs

/** One machine of the sweep, with the flags that name it on the command line. */
export interface SweptMachine {
  label: string
  profile: HardwareProfile
}

/** GPU counts `--gpus N` is swept over; a Mac has one chip, so Apple entries take 1 only. */
export const GPU_COUNTS = [1, 2, 4, 8] as const

/** `rigfit plan --gpu NAME --gpus N` for every count the command accepts for the entry. */
export function catalogMachines(entries: GpuCatalogEntry[]): SweptMachine[] {
  return entries.flatMap((entry) =>
    GPU_COUNTS.filter((count) => count === 1 || entry.vendor !== 'apple').map((count) => ({
      label: `--gpu "${entry.name}" --gpus ${count}`,
      profile: whatIfProfile({ gpu: entry, gpus: count }, ALL_GPUS),
    })),
  )
}

/**
 * The entries of a CUDA catalog whose compute capability lies in [from, below): a large catalog is swept in a few
 * files, one per GPU generation, so the files share the cores and none runs for long.
 */
export function generation(entries: GpuCatalogEntry[], from: number, below: number): GpuCatalogEntry[] {
  const capability = (entry: GpuCatalogEntry) => computeCapabilityNumber(entry.computeCapability)
  // Every entry must fall in one generation, or the files would sweep less than the catalog between them.
  const unread = entries.filter((entry) => Number.isNaN(capability(entry)))
  if (unread.length > 0) throw new Error(`no compute capability: ${unread.map((e) => e.id).join(', ')}`)
  const picked = entries.filter((entry) => capability(entry) >= from && capability(entry) < below)
  if (picked.length === 0) throw new Error(`no catalog entry of compute capability [${from}, ${below})`)
  return picked
}

/** `rigfit plan --instance ID` for every cloud preset, and a GPU-less 64 GiB machine (`--ram 64`). */
export function presetAndCpuMachines(): SweptMachine[] {
  return [
    ...CLOUD_PRESETS.map((preset) => ({
      label: `--instance ${preset.id}`,
      profile: presetProfile(preset, ALL_GPUS),
    })),
    { label: '--ram 64 (CPU only)', profile: whatIfProfile({ ramGiB: 64 }, ALL_GPUS) },
  ]
}

/** Models from 124M to 70B parameters, dense and MoE. */
export const MODELS = [
  'gpt2',
  'llama-3.2-1b',
  'qwen2.5-1.5b',
  'phi-3-mini',
  'llama-3.1-8b',
  'mixtral-8x7b',
  'llama-3.1-70b',
] as const
export const METHODS = ['full', 'lora', 'qlora'] as const
export const MODES: readonly Mode[] = ['conservative', 'balanced', 'extreme']
export const NODES = [1, 2] as const

/** What a user asks for: a catalog model with a method, or pretraining (no model). */
export interface SweptWork {
  model: (typeof MODELS)[number] | null
  method: Workload['method']
}
export const WORKS: SweptWork[] = [
  { model: null, method: 'full' },
  ...MODELS.flatMap((model) => METHODS.map((method) => ({ model, method }))),
]

export function workloadOf(work: SweptWork, nodes: number): Workload {
  const model = work.model ? findCatalogModel(work.model) : null
  if (work.model && !model) throw new Error(`no catalog model ${work.model}`)
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: model ? 'finetune' : 'pretrain',
    model: model ?? null,
    method: work.method,
    frozenModels: [],
    datasetBytes: null,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: null,
    nodes,
  }
}

/** Freezes an object graph, so a generator that wrote into shared decisions would throw. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

const decisionsByFacts = new Map<string, Promise<Decisions>>()

/**
 * The packs' decisions for a set of facts. `decide` is a function of the packs and the facts alone, and many
 * combinations share facts (models of one size class, both node counts), so each set is decided once; the
 * decisions are frozen because every plan of those facts reads them.
 */
function decisionsFor(facts: Facts): Promise<Decisions> {
  const key = JSON.stringify(facts)
  let pending = decisionsByFacts.get(key)
  if (!pending) {
    pending = decide(PACKS, facts).then(deepFreeze)
    decisionsByFacts.set(key, pending)
  }
  return pending
}

/** The plan `rigfit plan` prints for the machine, workload and mode, or null where nothing fits. */
export async function planFor(
  profile: HardwareProfile,
  workload: Workload,
  mode: Mode,
): Promise<TrainingPlan | null> {
  const decisions = await decisionsFor(deriveFacts(profile, workload, mode))
  try {
    return generatePlan({ profile, workload, mode, decisions, options: { createdAt: 'fixed' } })
  } catch (error) {
    if (isRigfitError(error) && error.kind === 'fit') return null
    throw error
  }
}
