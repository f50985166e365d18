import { type TrainingPlan, worldSize } from '@rigfit/core'

/** Where a training state lives when it is offloaded from the GPU. */
export type OffloadTarget = 'none' | 'cpu' | 'nvme'

/**
 * How a plan's strategy runs in the training frameworks: one decision, so every format launches the same thing.
 * `local` is one process (one device, a CPU, or models placed per GPU inside one process).
 */
export interface Engine {
  kind: 'local' | 'ddp' | 'deepspeed' | 'fsdp'
  /** DeepSpeed ZeRO stage; 0 outside DeepSpeed. */
  stage: 0 | 1 | 2 | 3
  optimizerOffload: OffloadTarget
  paramOffload: OffloadTarget
  /**
   * The plan shards with FSDP and offloads only the optimizer states. FSDP's CPU offload always moves the
   * parameters (and gradients) too, so the formats run the plan as DeepSpeed ZeRO-3 with optimizer offload: the
   * same sharding and the memory the plan predicts.
   */
  fsdpAsZero3: boolean
}

/** The devices the plan's `offload` setting sends optimizer states and parameters to. */
export function offloadTargets(plan: TrainingPlan): { optimizer: OffloadTarget; params: OffloadTarget } {
  // Read as a string: `nvme` (ZeRO-Infinity) may be part of the schema's vocabulary or not.
  const offload: string = plan.settings.offload
  switch (offload) {
    case 'none':
      return { optimizer: 'none', params: 'none' }
    case 'optimizer':
      return { optimizer: 'cpu', params: 'none' }
    case 'all':
      return { optimizer: 'cpu', params: 'cpu' }
    case 'nvme':
      return { optimizer: 'nvme', params: 'nvme' }
    default:
      throw new Error(`offload ${offload} has no mapping to offload devices`)
  }
}

const ZERO_STAGE: Record<string, 1 | 2 | 3> = { zero1: 1, zero2: 2, zero3: 3 }

function zeroStageOf(sharding: string): 1 | 2 | 3 {
  const stage = ZERO_STAGE[sharding]
  // checkPlan refuses a ZeRO strategy without a ZeRO stage before any format runs.
  if (stage === undefined) throw new Error(`sharding ${sharding} is not a ZeRO stage`)
  return stage
}

export function engineOf(plan: TrainingPlan): Engine {
  const s = plan.settings
  const { optimizer, params } = offloadTargets(plan)
  const none = { stage: 0 as const, optimizerOffload: 'none' as const, paramOffload: 'none' as const }
  switch (s.strategy) {
    case 'zero':
    case 'zero-offload':
      return {
        kind: 'deepspeed',
        stage: zeroStageOf(s.sharding),
        optimizerOffload: optimizer,
        paramOffload: params,
        fsdpAsZero3: false,
      }
    case 'fsdp':
      if (optimizer !== 'none' && (params === 'none' || params === 'nvme')) {
        return {
          kind: 'deepspeed',
          stage: 3,
          optimizerOffload: optimizer,
          paramOffload: params,
          fsdpAsZero3: true,
        }
      }
      return { kind: 'fsdp', stage: 0, optimizerOffload: optimizer, paramOffload: params, fsdpAsZero3: false }
    case 'model-split':
      return { kind: 'local', ...none, fsdpAsZero3: false }
    default:
      return { kind: worldSize(s) > 1 ? 'ddp' : 'local', ...none, fsdpAsZero3: false }
  }
}

/**
 * The torch.distributed backend the launched processes use. A plan's `backend` is `none` when it needs no
 * collectives (one process), but DeepSpeed initialises a process group even for one process (ZeRO-Offload on
 * one GPU), so such a run gets the device's backend: nccl, rccl on ROCm, gloo on CPUs.
 */
export function launchBackend(plan: TrainingPlan): TrainingPlan['settings']['backend'] {
  const s = plan.settings
  if (s.backend !== 'none') return s.backend
  if (engineOf(plan).kind !== 'deepspeed' && worldSize(s) <= 1) return 'none'
  return s.device === 'cpu' ? 'gloo' : s.device === 'rocm' ? 'rccl' : 'nccl'
}

/**
 * FSDP's sharding across the job: within a node, replicated across nodes (HYBRID_SHARD) on several, the layout
 * the plan's memory counts (FSDP per node) and every format writes; FULL_SHARD on one node.
 */
export function fsdpShardingStrategy(plan: TrainingPlan): 'FULL_SHARD' | 'HYBRID_SHARD' {
  return plan.settings.nodes > 1 ? 'HYBRID_SHARD' : 'FULL_SHARD'
}

/** torch.distributed's name for the backend: ROCm's RCCL is registered under `nccl`. */
export function torchBackendName(plan: TrainingPlan): Exclude<TrainingPlan['settings']['backend'], 'rccl'> {
  const backend = launchBackend(plan)
  return backend === 'rccl' ? 'nccl' : backend
}

/** The warning every format that runs `fsdpAsZero3` gives, so the substitution is never silent. */
export function warnFsdpAsZero3(engine: Engine, warn: (id: string, message: string) => void): void {
  if (!engine.fsdpAsZero3) return
  warn(
    'fsdp-optimizer-offload-as-zero3',
    'The plan shards with FSDP and offloads only the optimizer states; FSDP cannot do that (its CPU offload moves the parameters too), so this export runs it as DeepSpeed ZeRO-3 with optimizer offload, the memory and speed the plan predicts.',
  )
}

/** ZeRO-Infinity keeps what it offloads to NVMe under this path; the user points it at a local NVMe drive. */
export const NVME_OFFLOAD_PATH = '/local_nvme'

export function warnNvmePath(engine: Engine, warn: (id: string, message: string) => void): void {
  if (engine.optimizerOffload !== 'nvme' && engine.paramOffload !== 'nvme') return
  warn(
    'nvme-offload-path',
    `The plan offloads to NVMe: the configs name ${NVME_OFFLOAD_PATH}; point nvme_path at a local NVMe drive with room for the optimizer states and parameters before launching.`,
  )
}
