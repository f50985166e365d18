import { estimate } from '../estimate/index.js'
import type { Attention, Offload, Optimizer, Precision, Quantization, Sharding } from '../schemas/common.js'
import { EstimateInput, type EstimateResult, type LoraSpec } from '../schemas/estimate.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import type { TrainingDevices } from './training-devices.js'

/** One point of the candidate space, with the estimate for it. */
export interface Candidate {
  model: ModelSpec
  /** Whether the model size lies in the mode's range (from-scratch) — out-of-range ones are fallbacks. */
  inRange: boolean
  method: 'full' | 'lora' | 'qlora'
  methodRank: number
  lora: LoraSpec | null
  quant: Quantization
  seq: number
  microBatch: number
  gradAccum: number
  gradCheckpointing: boolean
  sharding: Sharding
  offload: Offload
  precision: Precision
  attention: Attention
  optimizer: Optimizer
  result: EstimateResult
  /** Whole-job tokens/s after multi-GPU and multi-node scaling. */
  tokensPerSecond: number
  /** Hours to train the token target at that rate. */
  hours: number
  timeFeasible: boolean
  /** Bytes on the device including frozen companion models. */
  deviceBytes: number
}

export interface SearchSpace {
  models: { spec: ModelSpec; inRange: boolean }[]
  methods: { method: Candidate['method']; lora: LoraSpec | null; quant: Quantization }[]
  seqs: number[]
  microBatches: number[]
  gradCheckpointing: boolean[]
  shardings: Sharding[]
  offloads: Offload[]
  precision: Precision
  attention: Attention
  optimizer: Optimizer
  fusedOptimizer: boolean
  tf32: boolean
  gpus: number
  nodes: number
  /** Target effective batch in sequences. */
  targetEffectiveBatch: number
  budgetBytes: number
  hostBudgetBytes: number
  frozenBytes: number
  /** Tokens the run must process for a model of `params` parameters. */
  tokenTarget: (params: number) => number
  maxHours: number
  efficiency: (sharding: Sharding) => number
  /** Extreme mode fills memory (the largest micro-batch without OOM); the others prefer speed. */
  fillMemory: boolean
  /** The user asked for this effective batch: only micro-batches that reach it exactly. */
  exactTarget: boolean
  microBatchRange: readonly [number, number]
}

export function gradAccumFor(target: number, microBatch: number, gpus: number, nodes: number): number {
  return Math.max(1, Math.round(target / (microBatch * Math.max(1, gpus) * nodes)))
}

/** Evaluates the whole space and returns every candidate that fits the memory budget. */
export function searchCandidates(
  space: SearchSpace,
  devices: TrainingDevices,
): { fitting: Candidate[]; evaluated: number } {
  const fitting: Candidate[] = []
  let evaluated = 0
  const first = space.models[0]
  if (!first) return { fitting, evaluated }
  // Parse once for the estimator's defaults; the loop below only overrides what it searches.
  const defaults = EstimateInput.parse({
    model: first.spec,
    seq: 1,
    microBatch: 1,
    precision: space.precision,
    optimizer: space.optimizer,
    attention: space.attention,
    gpus: Math.max(1, space.gpus),
    device: devices.estimateDevice,
    optimizerImpl: space.fusedOptimizer ? 'fused' : 'foreach',
    tf32: space.tf32,
  })
  for (const { spec, inRange } of space.models) {
    for (const [methodRank, method] of space.methods.entries()) {
      for (const seq of space.seqs) {
        if (seq > spec.maxPositions && spec.source !== 'generated') continue
        for (const microBatch of space.microBatches) {
          const gradAccum = gradAccumFor(space.targetEffectiveBatch, microBatch, space.gpus, space.nodes)
          if (
            space.exactTarget &&
            gradAccum * microBatch * Math.max(1, space.gpus) * space.nodes !== space.targetEffectiveBatch
          )
            continue
          for (const gradCheckpointing of space.gradCheckpointing) {
            for (const sharding of space.shardings) {
              for (const offload of space.offloads) {
                if (!validShardingOffload(sharding, offload, space.gpus * space.nodes)) continue
                const input: EstimateInput = {
                  ...defaults,
                  model: spec,
                  seq,
                  microBatch,
                  gradAccum,
                  gradCheckpointing,
                  sharding,
                  offload,
                  lora: method.lora,
                  quant: method.quant,
                  head: spec.kind === 'encoder' ? 'classification' : 'lm',
                }
                evaluated += 1
                const result = estimate(input)
                const deviceBytes = result.perDevice.total + space.frozenBytes
                if (deviceBytes > space.budgetBytes || result.host.total > space.hostBudgetBytes) continue
                const perJob =
                  (result.throughput?.tokensPerSecond ?? 0) * space.nodes * space.efficiency(sharding)
                const hours =
                  perJob > 0
                    ? space.tokenTarget(result.params.total) / perJob / 3600
                    : Number.POSITIVE_INFINITY
                fitting.push({
                  model: spec,
                  inRange,
                  method: method.method,
                  methodRank,
                  lora: method.lora,
                  quant: method.quant,
                  seq,
                  microBatch,
                  gradAccum,
                  gradCheckpointing,
                  sharding,
                  offload,
                  precision: space.precision,
                  attention: space.attention,
                  optimizer: space.optimizer,
                  result,
                  tokensPerSecond: perJob,
                  hours,
                  timeFeasible: hours <= space.maxHours,
                  deviceBytes,
                })
              }
            }
          }
        }
      }
    }
  }
  return { fitting, evaluated }
}

/**
 * Orders fitting candidates best first: in the mode's range, then the preferred fine-tuning method, then
 * feasible in time, then the largest model (the smallest when none is feasible in time); then extreme mode
 * fills memory (largest batch without OOM) while the others take the longest sequence, a micro-batch inside the
 * mode's range, and speed.
 */
export function compareCandidates(space: SearchSpace, anyTimeFeasible: boolean) {
  const [mbLow, mbHigh] = space.microBatchRange
  return (a: Candidate, b: Candidate): number => {
    if (a.inRange !== b.inRange) return a.inRange ? -1 : 1
    if (a.methodRank !== b.methodRank) return a.methodRank - b.methodRank
    if (a.timeFeasible !== b.timeFeasible) return a.timeFeasible ? -1 : 1
    const paramsA = a.result.params.total
    const paramsB = b.result.params.total
    if (paramsA !== paramsB) return anyTimeFeasible ? paramsB - paramsA : paramsA - paramsB
    if (space.fillMemory && a.deviceBytes !== b.deviceBytes) return b.deviceBytes - a.deviceBytes
    if (a.seq !== b.seq) return b.seq - a.seq
    const mbInA = a.microBatch >= mbLow && a.microBatch <= mbHigh
    const mbInB = b.microBatch >= mbLow && b.microBatch <= mbHigh
    if (mbInA !== mbInB) return mbInA ? -1 : 1
    // Within 2 %, speed ties: prefer the simpler setup (no checkpointing, sharding or offload), then larger batches.
    const speed =
      (b.tokensPerSecond - a.tokensPerSecond) / Math.max(a.tokensPerSecond, b.tokensPerSecond, 1e-9)
    if (Math.abs(speed) > 0.02) return speed > 0 ? 1 : -1
    const complexity = (c: Candidate) =>
      Number(c.gradCheckpointing) + Number(c.sharding !== 'none') + Number(c.offload !== 'none') * 2
    if (complexity(a) !== complexity(b)) return complexity(a) - complexity(b)
    return b.microBatch - a.microBatch
  }
}

/**
 * Combinations a trainer can run: offload needs a ZeRO / FSDP engine (DeepSpeed offloads only through ZeRO, even
 * on one GPU), parameter offload needs stage 3 or FSDP, and on one device sharding is only a vehicle for offload.
 */
export function validShardingOffload(sharding: Sharding, offload: Offload, worldSize: number): boolean {
  if (offload !== 'none' && sharding === 'none') return false
  if (offload === 'all' && (sharding === 'zero1' || sharding === 'zero2')) return false
  if (worldSize <= 1 && sharding !== 'none' && offload === 'none') return false
  return true
}
