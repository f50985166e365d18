import type { ModelParts } from '../model/params.js'

export interface GatherContext {
  /** ZeRO stage of the weights (3 for ZeRO-3 and FSDP full sharding). */
  stage: number
  /** Weights live on the host and are copied in per block. */
  offloadAll: boolean
  /** FSDP keeps the units backward gathers unsharded until the step ends when they hold no trained weights. */
  frozenStaysGathered: boolean
  /** The base weights train (no adapters). */
  fullTraining: boolean
  /** Bytes of every weight of the model at its stored precision (frozen base, quantised or not, plus adapters). */
  weightsTotal: number
}

/**
 * Bytes of gathered (unsharded) weights beside a device's shards at the backward peak.
 *
 * Sharded weights are gathered in 16-bit per block: the running block and the prefetched one, plus the block's
 * unsharded gradients before reduce-scatter, or the embedding when it is larger.
 *
 * FSDP that reshards a unit only in a hook on its parameters' gradient accumulation, which a frozen base never
 * reaches, keeps the units backward gathers unsharded until the step ends (pytorch/pytorch#95805, "continuous
 * increase of CUDA memory after the backward pass of each block"; pytorch/pytorch#101982 adds the reshard hook).
 * With adapters the device then holds a whole unsharded copy of the model beside its shard, as the LitGPT
 * multi-GPU LoRA tables (PyTorch 2.1) measure on 2 and 4 GPUs alike. DeepSpeed ZeRO-3 releases a module's
 * parameters in its own backward hook, trained or not.
 */
export function gatheredWeightBytes(parts: ModelParts, ctx: GatherContext): number {
  if (ctx.stage < 3 && !ctx.offloadAll) return 0
  const perBlock =
    2 * Math.max(2 * parts.layer + (ctx.fullTraining ? parts.layer : 0), parts.embedding + parts.head)
  if (ctx.frozenStaysGathered && !ctx.fullTraining && !ctx.offloadAll)
    return Math.max(perBlock, ctx.weightsTotal)
  return perBlock
}
