import { estimate } from '../estimate/index.js'
import type { InterconnectKind } from '../estimate/scaling.js'
import type { Attention, Offload, Optimizer, Precision, Sharding } from '../schemas/common.js'
import type { EstimateResult } from '../schemas/estimate.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import type { StackMechanisms } from '../schemas/stack.js'
import { effectiveBatchOf, worldSize } from './batch.js'
import type { MethodChoice } from './candidates.js'
import { compileWithQuant, type StackVersions } from './compile-support.js'
import { deepSpeedPrecision } from './deepspeed-precision.js'
import type { TrainingDevices } from './training-devices.js'
import { pointEstimateInput, type TrainingPoint } from './training-point.js'

/** One point of the candidate space, with the estimate for it. */
export interface Candidate extends TrainingPoint {
  method: MethodChoice['method']
  /** Whether the model size lies in the mode's range (from-scratch) — out-of-range ones are fallbacks. */
  inRange: boolean
  /** Position of the method in the preference order (0 = most preferred). */
  methodRank: number
  result: EstimateResult
  /** Whole-job tokens/s, after the cost of data parallelism (the estimate's own figure). */
  tokensPerSecond: number
  /** Hours to train the token target at that rate. */
  hours: number
  timeFeasible: boolean
  /** Bytes on the device including frozen companion models. */
  deviceBytes: number
  /** Above the mode's memory line, within its tolerance: kept only where it spares a mechanism (choose.ts). */
  overLine: boolean
}

/**
 * The mode's memory line is a target, not a wall: a setup up to 2 % above it may be planned when it spares a
 * mechanism (offload, 8-bit states, checkpointing) the setups under the line need. The estimate is not finer.
 */
export const BUDGET_TOLERANCE = 0.02

/** Estimates already made during one search, by point: rungs overlap, each point is estimated once. */
export type EstimateCache = Map<string, EstimateResult>

export interface SearchSpace {
  models: { spec: ModelSpec; inRange: boolean }[]
  /** Methods to try, each with its rank in the mode's preference order. */
  methods: { choice: MethodChoice; rank: number }[]
  seqs: number[]
  microBatches: number[]
  /** Accumulation the user pinned (--grad-accum); null: the target effective batch sets it. */
  gradAccum: number | null
  gradCheckpointing: boolean[]
  shardings: Sharding[]
  offloads: Offload[]
  optimizers: Optimizer[]
  precision: Precision
  attention: Attention
  fusedOptimizer: boolean
  compile: boolean
  tf32: boolean
  /** The stack that runs the plan: what it does beyond the settings (logits upcast, adapter type, loss chunks). */
  stack: StackMechanisms
  /** Data-parallel GPUs per node. */
  gpus: number
  nodes: number
  interconnect: InterconnectKind
  /** Target effective batch in sequences. */
  targetEffectiveBatch: number
  /**
   * The sequence length a pretraining target was sized for, or null: a scaling recipe sets tokens per step, so a
   * shorter sequence takes proportionally more sequences.
   */
  targetBatchSeq?: number | null
  /** The effective batch never goes below this (a fine-tune's floor; 1 where the user set the batch). */
  minEffectiveBatch: number
  /** The stack's library versions, which decide whether compilation works over a quantized base. */
  stackVersions: StackVersions | null
  budgetBytes: number
  hostBudgetBytes: number
  frozenBytes: number
  /** Tokens the run must process for a model of `params` parameters. */
  tokenTarget: (params: number) => number
  maxHours: number
  /** The user asked for this effective batch: only micro-batches that reach it exactly. */
  exactTarget: boolean
}

/**
 * Accumulation that brings micro-batches over every rank nearest the target effective batch, rounded up where
 * the nearest would fall below the floor.
 */
export function gradAccumFor(
  target: number,
  microBatch: number,
  gpus: number,
  nodes: number,
  floor = 1,
): number {
  const perStep = effectiveBatchOf({ microBatch, gradAccum: 1, gpus, nodes })
  return Math.max(1, Math.round(target / perStep), Math.ceil(floor / perStep))
}

/** The target batch in sequences at this sequence length: the same tokens per step when the target is in tokens. */
function targetAt(space: SearchSpace, seq: number): number {
  const sizedFor = space.targetBatchSeq ?? null
  if (sizedFor === null || seq >= sizedFor) return space.targetEffectiveBatch
  return Math.round((space.targetEffectiveBatch * sizedFor) / seq)
}

/**
 * Evaluates the space and returns every candidate that fits the memory budgets. Memory grows with the
 * micro-batch while accumulation stays above 1, so after the first micro-batch that does not fit only those
 * that need no accumulation (which drops the gradients held across micro-batches) are still tried.
 */
export function searchCandidates(
  space: SearchSpace,
  devices: TrainingDevices,
  cache: EstimateCache = new Map(),
): SearchTally {
  const tally: SearchTally = { fitting: [], evaluated: 0, hostNeedBytes: null, leastBytes: null }
  for (const levers of leverCombinations(space)) searchMicroBatches(space, devices, cache, levers, tally)
  return tally
}

/** What a search found: the fitting candidates, estimates made, and the limits that ruled the others out. */
export interface SearchTally {
  fitting: Candidate[]
  evaluated: number
  hostNeedBytes: number | null
  leastBytes: number | null
}

/** One setting of every lever but the batch: model, method, sequence, checkpointing, sharding, offload, optimizer. */
interface Levers {
  spec: ModelSpec
  inRange: boolean
  choice: MethodChoice
  rank: number
  seq: number
  gradCheckpointing: boolean
  sharding: Sharding
  offload: Offload
  optimizer: Optimizer
}

/** Every valid lever setting of the space, in the search's order (model outermost, optimizer innermost). */
function* leverCombinations(space: SearchSpace): Generator<Levers> {
  const world = worldSize(space)
  for (const { spec, inRange } of space.models) {
    for (const { choice, rank } of space.methods) {
      for (const seq of space.seqs) {
        if (seq > spec.maxPositions && spec.source !== 'generated') continue
        for (const gradCheckpointing of space.gradCheckpointing) {
          for (const sharding of space.shardings) {
            for (const offload of space.offloads) {
              for (const optimizer of space.optimizers) {
                if (!validLevers(sharding, offload, optimizer, world)) continue
                yield { spec, inRange, choice, rank, seq, gradCheckpointing, sharding, offload, optimizer }
              }
            }
          }
        }
      }
    }
  }
}

/**
 * The micro-batches of one lever setting, smallest first: each is estimated (once per point, through the cache)
 * and kept when it fits. Past the memory line only setups without accumulation are tried; past host RAM none.
 */
function searchMicroBatches(
  space: SearchSpace,
  devices: TrainingDevices,
  cache: EstimateCache,
  levers: Levers,
  tally: SearchTally,
): void {
  const line = space.budgetBytes * (1 + BUDGET_TOLERANCE)
  let onlyWithoutAccumulation = false
  for (const microBatch of space.microBatches) {
    const gradAccum =
      space.gradAccum ??
      gradAccumFor(targetAt(space, levers.seq), microBatch, space.gpus, space.nodes, space.minEffectiveBatch)
    const shape = { microBatch, gradAccum, gpus: space.gpus, nodes: space.nodes }
    if (space.exactTarget && effectiveBatchOf(shape) !== space.targetEffectiveBatch) continue
    if (onlyWithoutAccumulation && gradAccum > 1) continue
    const point = trainingPointOf(space, levers, microBatch, gradAccum)
    const key = pointKey(point)
    let result = cache.get(key)
    if (!result) {
      tally.evaluated += 1
      result = estimate(pointEstimateInput(point, devices.estimateDevice, space.interconnect, space.stack))
      cache.set(key, result)
    }
    const deviceBytes = result.perDevice.total + space.frozenBytes
    tally.leastBytes = Math.min(tally.leastBytes ?? Infinity, deviceBytes)
    if (result.host.total > space.hostBudgetBytes) {
      // Fits the GPU but not host RAM: the host is the limit, which the refusal names.
      if (deviceBytes <= space.budgetBytes)
        tally.hostNeedBytes = Math.min(tally.hostNeedBytes ?? Infinity, result.host.total)
      break
    }
    if (deviceBytes > line) {
      onlyWithoutAccumulation = true
      continue
    }
    tally.fitting.push(candidateOf(space, levers, point, result, deviceBytes))
  }
}

/** The point the estimator prices for a lever setting and batch. */
function trainingPointOf(
  space: SearchSpace,
  levers: Levers,
  microBatch: number,
  gradAccum: number,
): TrainingPoint {
  const { choice, sharding, offload } = levers
  return {
    model: levers.spec,
    seq: levers.seq,
    microBatch,
    gradAccum,
    precision: deepSpeedPrecision(space.precision, sharding, offload),
    optimizer: levers.optimizer,
    fusedOptimizer: space.fusedOptimizer,
    compile: space.compile && compileWithQuant(choice.quant, space.stackVersions).compiles,
    gradCheckpointing: levers.gradCheckpointing,
    attention: space.attention,
    gpus: Math.max(1, space.gpus),
    nodes: space.nodes,
    sharding,
    offload,
    lora: choice.lora,
    quant: choice.quant,
    tf32: space.tf32,
  }
}

/** A fitting point with its speed, the hours its token target takes, and where it lies against the budget. */
function candidateOf(
  space: SearchSpace,
  levers: Levers,
  point: TrainingPoint,
  result: EstimateResult,
  deviceBytes: number,
): Candidate {
  const tokensPerSecond = result.throughput?.tokensPerSecond ?? 0
  const hours =
    tokensPerSecond > 0
      ? space.tokenTarget(result.params.total) / tokensPerSecond / 3600
      : Number.POSITIVE_INFINITY
  return {
    ...point,
    method: levers.choice.method,
    inRange: levers.inRange,
    methodRank: levers.rank,
    result,
    tokensPerSecond,
    hours,
    timeFeasible: hours <= space.maxHours,
    deviceBytes,
    overLine: deviceBytes > space.budgetBytes,
  }
}

/** A point's identity: the model by its shape, every other field as it is. */
function pointKey(point: TrainingPoint): string {
  const { model, ...rest } = point
  return JSON.stringify([model.id, model.layers, model.hidden, rest])
}

/**
 * Combinations a trainer can run: offload needs a ZeRO / FSDP engine (DeepSpeed offloads only through ZeRO, even
 * on one GPU), parameter offload needs stage 3 or FSDP, FSDP offloads parameters with their gradients and
 * optimizer states or nothing (its CPUOffload has no optimizer-only form), and on one device sharding is only a vehicle for offload,
 * through DeepSpeed (ZeRO-Offload / ZeRO-Infinity, strategy `zero-offload`).
 */
export function validShardingOffload(sharding: Sharding, offload: Offload, worldSize: number): boolean {
  if (offload !== 'none' && sharding === 'none') return false
  if (offload === 'all' && (sharding === 'zero1' || sharding === 'zero2')) return false
  if (offload === 'optimizer' && sharding === 'fsdp') return false
  if (worldSize <= 1 && sharding !== 'none' && (offload === 'none' || sharding === 'fsdp')) return false
  return true
}

/**
 * Valid sharding / offload pairs, and 8-bit optimizer states only where bitsandbytes' optimizer runs as it is:
 * unsharded and on the device (DeepSpeed's offload runs its own CPU Adam; ZeRO and FSDP shard fp32 states).
 */
export function validLevers(
  sharding: Sharding,
  offload: Offload,
  optimizer: Optimizer,
  worldSize: number,
): boolean {
  if (!validShardingOffload(sharding, offload, worldSize)) return false
  return optimizer !== 'adamw-8bit' || (sharding === 'none' && offload === 'none')
}
