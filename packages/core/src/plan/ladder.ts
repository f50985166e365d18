import type { DeviceKind, Mode, Offload, Optimizer, Sharding } from '../schemas/common.js'
import type { SettingPins } from '../schemas/workload.js'
import { worldSize } from './batch.js'
import { type Method, methodChoice } from './candidates.js'
import { type Alternative, chooseSetup, type Found } from './choose.js'
import type { DecisionReader } from './decided.js'
import type { RankOptions } from './rank.js'
import { type Candidate, type EstimateCache, type SearchSpace, searchCandidates } from './search.js'
import type { TrainingDevices } from './training-devices.js'

/**
 * The levers that make a plan fit, cheapest first, the way an expert reaches for them: recomputing activations
 * (and sharding across the GPUs there are), then 8-bit optimizer states, then optimizer offload to host RAM,
 * then parameter offload, and only then a sequence shorter than the user or the mode asks for. Each level also
 * keeps the cheaper ones.
 */
export type Lever =
  | 'checkpointing'
  | '8-bit-optimizer'
  | 'offload-optimizer'
  | 'offload-all'
  | 'shorter-sequence'

const LEVEL: Record<Lever, number> = {
  checkpointing: 1,
  '8-bit-optimizer': 2,
  'offload-optimizer': 3,
  'offload-all': 4,
  'shorter-sequence': 4,
}

/** One step of the ladder: the space searched, the lever it adds, and whether rule preferences are dropped. */
export interface Rung {
  lever: Lever
  rulesRelaxed: boolean
  space: SearchSpace
}

export type BaseSpace = Omit<
  SearchSpace,
  'methods' | 'seqs' | 'gradCheckpointing' | 'shardings' | 'offloads' | 'optimizers'
>

export interface LadderInput {
  base: BaseSpace
  reader: DecisionReader
  mode: Mode
  deviceKind: DeviceKind
  /** Methods in the mode's preference order, forbidden ones already removed. */
  methods: Method[]
  /** The user named the method: a pack's preferred method does not apply. */
  methodPinned: boolean
  /** The optimizer the packs decided (or the default). */
  optimizer: Optimizer
  seqs: number[]
  shorterSeqs: number[]
  /** Settings the user fixed: each lever they name has that one value on every rung. */
  pins: SettingPins
}

type Levers = Pick<SearchSpace, 'gradCheckpointing' | 'shardings' | 'offloads' | 'optimizers'>

/** Every rung, in the order they are tried; a rung identical to an earlier one is left out. */
export function ladderRungs(input: LadderInput): Rung[] {
  const { reader, mode } = input
  const decidedMethod = input.methodPinned ? undefined : reader.value<Method>('method')
  // A method the packs prefer goes first; the rest follow in the mode's order.
  const order =
    decidedMethod && input.methods.includes(decidedMethod)
      ? [decidedMethod, ...input.methods.filter((m) => m !== decidedMethod)]
      : input.methods
  const ranked = order.map((method, rank) => ({ choice: methodChoice(method, mode, input.pins), rank }))
  const offloadAll = mode === 'extreme' && offloadCapable(input.deviceKind)
  const steps: { lever: Lever; methods: typeof ranked; seqs: number[] }[] = []
  for (const method of ranked) {
    for (const lever of ['checkpointing', '8-bit-optimizer', 'offload-optimizer'] as const)
      steps.push({ lever, methods: [method], seqs: input.seqs })
  }
  if (offloadAll) steps.push({ lever: 'offload-all', methods: ranked, seqs: input.seqs })
  if (input.shorterSeqs.length > 0)
    steps.push({ lever: 'shorter-sequence', methods: ranked, seqs: input.shorterSeqs })

  const rungs: Rung[] = []
  const seen = new Set<string>()
  for (const step of steps) {
    for (const rulesRelaxed of [false, true]) {
      const levers = leverChoices(input, LEVEL[step.lever], offloadAll, rulesRelaxed)
      const methods = rulesRelaxed
        ? step.methods
        : step.methods.filter((m) => !decidedMethod || m.choice.method === decidedMethod)
      if (methods.length === 0 || Object.values(levers).some((choices) => choices.length === 0)) continue
      const key = JSON.stringify([methods.map((m) => m.rank), step.seqs, levers])
      if (seen.has(key)) continue
      seen.add(key)
      rungs.push({
        lever: step.lever,
        rulesRelaxed,
        space: { ...input.base, ...levers, methods, seqs: step.seqs },
      })
    }
  }
  return rungs
}

export interface LadderResult {
  best: Candidate | null
  rung: Rung | null
  /** Candidates estimated over every rung tried. */
  evaluated: number
  /** Candidates that fit, over every rung tried. */
  fitting: number
  /** The least host RAM a setup that fits the GPU needs, where host RAM ruled such setups out; else null. */
  hostNeedBytes: number | null
  /** The least device memory any setup tried needs, fitting or not; null when nothing was tried. */
  leastBytes: number | null
  /** The best setup that keeps the rule packs' preferences, when one fits. */
  preferredBest: Candidate | null
  /** The setups weighed, by distinct levers, with their predicted speed and time. */
  alternatives: Alternative[]
}

/**
 * Climbs the ladder and weighs every setup that fits on the way (choose.ts): the levers are chosen by predicted
 * cost, not by the order they are reached. Rungs of a method below one that already fits are skipped (the method
 * order decides before speed); parameter offload and the shorter-sequence rung are tried only when nothing at the
 * cheaper levers fits, with any method.
 */
export function climbLadder(rungs: Rung[], devices: TrainingDevices, rank: RankOptions): LadderResult {
  let evaluated = 0
  let hostNeedBytes: number | null = null
  let leastBytes: number | null = null
  const cache: EstimateCache = new Map()
  const found = new Map<string, Found>()
  let bestRank = Number.POSITIVE_INFINITY
  // Whether a setup fit before each last-resort lever was first reached: all of that lever's rungs (with and
  // without the rule packs' preferences) are weighed together, so a setup that keeps a preference cannot shut
  // out a faster one that relaxes it.
  const fitBefore = new Map<Lever, boolean>()
  for (const rung of rungs) {
    const lowest = Math.min(...rung.space.methods.map((m) => m.rank))
    if (lowest > bestRank) continue
    // Parameter offload and a shorter sequence are last resorts, after every method at the cheaper levers.
    if (rung.lever === 'shorter-sequence' || rung.lever === 'offload-all') {
      if (!fitBefore.has(rung.lever)) fitBefore.set(rung.lever, found.size > 0)
      if (fitBefore.get(rung.lever)) continue
    }
    const result = searchCandidates(rung.space, devices, cache)
    evaluated += result.evaluated
    if (result.hostNeedBytes !== null)
      hostNeedBytes = Math.min(hostNeedBytes ?? Infinity, result.hostNeedBytes)
    if (result.leastBytes !== null) leastBytes = Math.min(leastBytes ?? Infinity, result.leastBytes)
    for (const candidate of result.fitting) {
      const key = candidateKey(candidate)
      const earlier = found.get(key)
      if (earlier) earlier.preferred ||= !rung.rulesRelaxed
      else found.set(key, { ...candidate, lever: rung.lever, preferred: !rung.rulesRelaxed })
      bestRank = Math.min(bestRank, candidate.methodRank)
    }
  }
  const choice = chooseSetup([...found.values()], rank)
  const best = choice.best
  const rung = best ? (rungs.find((r) => r.lever === best.lever) ?? null) : null
  return {
    best,
    rung,
    evaluated,
    fitting: found.size,
    hostNeedBytes,
    leastBytes,
    preferredBest: choice.preferredBest,
    alternatives: choice.alternatives,
  }
}

function candidateKey(c: Candidate): string {
  return JSON.stringify([
    c.model.id,
    c.result.params.total,
    c.method,
    c.seq,
    c.microBatch,
    c.gradAccum,
    c.gradCheckpointing,
    c.sharding,
    c.offload,
    c.optimizer,
    c.precision,
  ])
}

/** DeepSpeed and FSDP shard and offload on CUDA and ROCm GPUs. */
const offloadCapable = (kind: DeviceKind) => kind === 'cuda' || kind === 'rocm'

function leverChoices(input: LadderInput, level: number, offloadAll: boolean, rulesRelaxed: boolean): Levers {
  const { reader, deviceKind, pins } = input
  const world = worldSize(input.base)
  const preferred = <T extends string | boolean>(
    setting: 'gradCheckpointing' | 'sharding' | 'offload' | 'optimizer',
    options: T[],
  ): T[] => {
    // A pin is the user's: no rule forbids it away and no rung relaxes it.
    const pinned = pins[setting] as T | undefined
    if (pinned !== undefined) return [pinned]
    const decided = rulesRelaxed ? undefined : reader.value<T & (string | number | boolean)>(setting)
    return reader.allowed(setting, decided === undefined ? options : [decided])
  }
  const offloadLevels: Offload[] = ['none']
  if (level >= 3 && offloadCapable(deviceKind)) offloadLevels.push('optimizer')
  if (level >= 4 && offloadAll) offloadLevels.push('all')
  const offloads = preferred('offload', offloadLevels)
  // ZeRO and FSDP run on CUDA and ROCm; on one device ZeRO-2/3 only carry offload (validShardingOffload).
  // Optimizer-only offload of sharded parameters is ZeRO-3's: FSDP offloads parameters with it or nothing.
  const offloading = offloads.some((offload) => offload !== 'none')
  const shardings: Sharding[] = !offloadCapable(deviceKind)
    ? ['none']
    : world > 1
      ? ['none', 'zero1', 'zero2', ...(offloading ? (['zero3'] as const) : []), 'fsdp']
      : offloading
        ? ['none', 'zero2', 'zero3']
        : ['none']
  // bitsandbytes' 8-bit AdamW stands in for AdamW on CUDA.
  const optimizers: Optimizer[] =
    level >= 2 && deviceKind === 'cuda' && input.optimizer === 'adamw'
      ? ['adamw', 'adamw-8bit']
      : [input.optimizer]
  return {
    gradCheckpointing: preferred('gradCheckpointing', [false, true]),
    shardings: preferred('sharding', shardings),
    offloads,
    optimizers: preferred('optimizer', optimizers),
  }
}
