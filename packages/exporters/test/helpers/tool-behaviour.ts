/**
 * What the real tools do with the files rigfit writes, as data: one table per behaviour, each with the upstream
 * source and version it was read from. The tables answer "what would run" (the launcher's environment on every
 * rank, the dtype that trains, what is sharded over which ranks, what FSDP wraps), so a sweep can compare that
 * with the plan rather than only checking that the keys exist.
 */

/** Where a table's rules come from. */
export interface Upstream {
  project: string
  version: string
  source: string
}

// ---------------------------------------------------------------------------------------------------------------
// Launcher environment forwarding
// ---------------------------------------------------------------------------------------------------------------

/**
 * DeepSpeed's multi-node runner (pdsh, the default): each remote rank gets only the launching shell's variables
 * whose names start with one of these prefixes, plus the KEY=VALUE lines of the environment file (DS_ENV_FILE as a
 * path, else `.deepspeed_env` in the home folder or the working folder). One node runs `deepspeed.launcher.launch`
 * locally and inherits everything.
 */
export const DEEPSPEED_RUNNER = {
  upstream: {
    project: 'deepspeedai/DeepSpeed',
    version: 'v0.19.5',
    source:
      'deepspeed/launcher/runner.py: EXPORT_ENVS, DEEPSPEED_ENVIRONMENT_NAME/PATHS, main(); nebula/constants.py: NEBULA_EXPORT_ENVS',
  } satisfies Upstream,
  exportPrefixes: ['MLFLOW', 'NCCL', 'PYTHON', 'MV2', 'UCX', 'NEBULA'],
  envFileVariable: 'DS_ENV_FILE',
  envFileName: '.deepspeed_env',
}

/** The KEY=VALUE lines of an environment file as runner.py reads them (split at the first `=`, both stripped). */
export function readDeepSpeedEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    const at = line.indexOf('=')
    // runner.py unpacks `key, val = var.split('=', maxsplit=1)`: a line without `=` stops the launch.
    if (at < 0) throw new Error(`${DEEPSPEED_RUNNER.envFileName}: line without '=': ${line}`)
    env[line.slice(0, at).trim()] = line.slice(at + 1).trim()
  }
  return env
}

/** The environment a rank on a node other than the first sees under DeepSpeed's multi-node runner. */
export function deepSpeedRemoteEnv(
  launchEnv: Record<string, string>,
  envFile: string | null,
): Record<string, string> {
  const forwarded = Object.fromEntries(
    Object.entries(launchEnv).filter(([name]) =>
      DEEPSPEED_RUNNER.exportPrefixes.some((prefix) => name.startsWith(prefix)),
    ),
  )
  return { ...forwarded, ...(envFile === null ? {} : readDeepSpeedEnvFile(envFile)) }
}

/**
 * Slurm's srun: `--export=ALL,NAMES` passes the whole environment and names; `--export=NONE` nothing but SLURM_*;
 * without the option srun uses SLURM_EXPORT_ENV, which a job submitted with `sbatch --export=NONE` sets to NONE.
 * The check assumes that site default (the strictest), so only what srun names itself reaches the tasks.
 */
export const SRUN_EXPORT = {
  upstream: {
    project: 'SchedMD/slurm',
    version: '23.11',
    source: 'src/srun/opt.c (--export), doc/man/man1/srun.1: --export and SLURM_EXPORT_ENV',
  } satisfies Upstream,
}

/** The variables of the batch script that reach srun's tasks when the site's default export is NONE. */
export function srunTaskEnv(
  scriptEnv: Record<string, string>,
  exportFlag: string | null,
): Record<string, string> {
  if (exportFlag === null || exportFlag === 'NONE') return {}
  const names = exportFlag.split(',')
  if (names[0] === 'ALL') return { ...scriptEnv }
  return Object.fromEntries(names.flatMap((n) => (n in scriptEnv ? [[n, scriptEnv[n] as string]] : [])))
}

// ---------------------------------------------------------------------------------------------------------------
// Precision flags -> the dtype that trains
// ---------------------------------------------------------------------------------------------------------------

/** What trains: the weights' dtype, autocast's half type (or none), and whether fp32 master weights are kept. */
export interface TrainedDtype {
  weights: 'float32' | 'bfloat16' | 'float16'
  autocast: 'bf16' | 'fp16' | null
  fp32Master: boolean
  /** Why the combination cannot run, where the tool stops it. */
  fails: string | null
}

/** The plan's precision for what trains: the name the plan would give that combination. */
export function precisionOf(t: TrainedDtype): string {
  if (t.fails) return `fails: ${t.fails}`
  if (t.weights === 'float32') return t.autocast ? `${t.autocast}-mixed` : 'fp32'
  const half = t.weights === 'bfloat16' ? 'bf16' : 'fp16'
  // Half weights with fp32 master copies and optimizer states are the mixed variant's memory and arithmetic.
  return t.fp32Master ? `${half}-mixed` : `${half}-true`
}

const HALF_OF: Record<string, 'bf16' | 'fp16'> = { bfloat16: 'bf16', float16: 'fp16' }

/**
 * transformers' Trainer: `bf16`/`fp16` switch autocast (`torch.autocast` in `autocast_smart_context_manager`)
 * over the weights as loaded; `fp16` also creates a GradScaler, whose `unscale_` raises "Attempting to unscale
 * FP16 gradients." when the weights (and so the gradients) are fp16.
 */
export const HF_TRAINER_PRECISION = {
  upstream: {
    project: 'huggingface/transformers',
    version: '5.x (main at 00349ae8)',
    source:
      'src/transformers/training_args.py (bf16, fp16), trainer.py (autocast_smart_context_manager, GradScaler via accelerate); torch/amp/grad_scaler.py: _unscale_grads_',
  } satisfies Upstream,
  trained(flags: { bf16: boolean; fp16: boolean }, loadDtype: string): TrainedDtype {
    const weights = (loadDtype in HALF_OF ? loadDtype : 'float32') as TrainedDtype['weights']
    const autocast = flags.bf16 ? 'bf16' : flags.fp16 ? 'fp16' : null
    const fails =
      flags.fp16 && weights === 'float16' ? 'GradScaler: Attempting to unscale FP16 gradients' : null
    // Autocast to the weights' own type is a no-op: half weights with the matching flag train in pure half.
    const same = autocast !== null && HALF_OF[weights] === autocast
    return { weights, autocast: same ? null : autocast, fp32Master: false, fails }
  },
}

/**
 * accelerate: `mixed_precision` reaches the script as ACCELERATE_MIXED_PRECISION and turns on autocast (and fp16's
 * GradScaler) over the weights the script loads; `no` leaves the weights as loaded.
 */
export const ACCELERATE_PRECISION = {
  upstream: {
    project: 'huggingface/accelerate',
    version: 'main at 16cb6eb8',
    source:
      'src/accelerate/commands/launch.py (prepare_*_cmd_env: ACCELERATE_MIXED_PRECISION), src/accelerate/accelerator.py (autocast, GradScaler)',
  } satisfies Upstream,
  trained(mixedPrecision: string, loadDtype: string): TrainedDtype {
    return HF_TRAINER_PRECISION.trained(
      { bf16: mixedPrecision === 'bf16', fp16: mixedPrecision === 'fp16' },
      loadDtype,
    )
  },
}

/**
 * DeepSpeed: `bf16.enabled` / `fp16.enabled` cast the model to the half type and keep fp32 master weights and fp32
 * optimizer states (BF16_Optimizer, FP16_Optimizer, and ZeRO's fp32 partitions); neither leaves fp32.
 */
export const DEEPSPEED_PRECISION = {
  upstream: {
    project: 'deepspeedai/DeepSpeed',
    version: 'v0.19.5',
    source:
      'deepspeed/runtime/engine.py (_configure_distributed_model: module.half()/bfloat16(); _configure_optimizer), runtime/bf16_optimizer.py, runtime/fp16/fused_optimizer.py, runtime/zero/stage_1_and_2.py and stage3.py (fp32 partitions)',
  } satisfies Upstream,
  trained(config: { bf16?: { enabled?: unknown }; fp16?: { enabled?: unknown } }): TrainedDtype {
    const bf16 = config.bf16?.enabled === true
    const fp16 = config.fp16?.enabled === true
    if (!bf16 && !fp16) return { weights: 'float32', autocast: null, fp32Master: false, fails: null }
    return { weights: bf16 ? 'bfloat16' : 'float16', autocast: null, fp32Master: true, fails: null }
  },
}

/**
 * Lightning's precision plugins: `*-mixed` autocast over fp32 weights; `*-true` converts the module to the half type
 * (HalfPrecision) with no master copy; `32-true` fp32.
 */
export const LIGHTNING_PRECISION = {
  upstream: {
    project: 'Lightning-AI/pytorch-lightning',
    version: '2.6.5',
    source:
      'src/lightning/pytorch/plugins/precision/{amp,half,precision}.py; trainer/connectors/accelerator_connector.py',
  } satisfies Upstream,
  trained(precision: string): TrainedDtype {
    const table: Record<string, TrainedDtype> = {
      '32-true': { weights: 'float32', autocast: null, fp32Master: false, fails: null },
      '16-mixed': { weights: 'float32', autocast: 'fp16', fp32Master: false, fails: null },
      'bf16-mixed': { weights: 'float32', autocast: 'bf16', fp32Master: false, fails: null },
      '16-true': { weights: 'float16', autocast: null, fp32Master: false, fails: null },
      'bf16-true': { weights: 'bfloat16', autocast: null, fp32Master: false, fails: null },
    }
    return table[precision] ?? { weights: 'float32', autocast: null, fp32Master: false, fails: precision }
  },
}

// ---------------------------------------------------------------------------------------------------------------
// Sharding strategy -> what is sharded over which ranks; wrap policies
// ---------------------------------------------------------------------------------------------------------------

/** How a job is sharded: the engine, and the ranks the states are divided among (a node's, or the whole job's). */
export interface Sharded {
  engine: 'none' | 'ddp' | 'zero1' | 'zero2' | 'zero3' | 'fsdp'
  over: 'node' | 'job' | null
}

/**
 * torch FSDP's sharding strategies (as transformers' `fsdp` options, accelerate's fsdp_sharding_strategy and
 * Lightning's sharding_strategy name them): FULL_SHARD divides the states among every rank of the job,
 * HYBRID_SHARD among a node's ranks and replicates across nodes (the intra-node group is the local ranks).
 */
export const FSDP_SHARDING = {
  upstream: {
    project: 'pytorch/pytorch',
    version: '2.5',
    source:
      'torch/distributed/fsdp/api.py: ShardingStrategy; fsdp/_init_utils.py: _init_process_group_state_for_hybrid_shard (intra-node = local ranks)',
  } satisfies Upstream,
  over: {
    FULL_SHARD: 'job',
    SHARD_GRAD_OP: 'job',
    HYBRID_SHARD: 'node',
    _HYBRID_SHARD_ZERO2: 'node',
  } as Record<string, 'node' | 'job'>,
  /** transformers' `fsdp` string options to the strategy (trainer_utils.FSDPOption). */
  hfOption: {
    full_shard: 'FULL_SHARD',
    shard_grad_op: 'SHARD_GRAD_OP',
    hybrid_shard: 'HYBRID_SHARD',
    hybrid_shard_zero2: '_HYBRID_SHARD_ZERO2',
  } as Record<string, string>,
  /** Lightning's registered `fsdp` and `fsdp_cpu_offload` names construct FSDPStrategy's default: FULL_SHARD. */
  lightningNamed: 'FULL_SHARD',
}

/** DeepSpeed ZeRO partitions its states over the whole data-parallel group: every rank of the job. */
export const ZERO_SHARDING = {
  upstream: {
    project: 'deepspeedai/DeepSpeed',
    version: 'v0.19.5',
    source:
      'deepspeed/runtime/zero/stage_1_and_2.py, stage3.py: partitions over dp_process_group (all ranks)',
  } satisfies Upstream,
  over: 'job' as const,
}

/** What FSDP gathers at once: one wrapped layer, or the whole model as a single unit. */
export type Wrapped = 'layer' | 'model'

/**
 * Wrap policies: transformers' `auto_wrap` with `transformer_layer_cls_to_wrap` (default: the model's
 * `_no_split_modules`, its decoder layer), accelerate's TRANSFORMER_BASED_WRAP (the same default), Lightning's
 * FSDPStrategy `auto_wrap_policy` (a set of layer classes; none wraps only the root module).
 */
export const WRAP_POLICIES = {
  upstream: {
    project: 'huggingface/transformers, huggingface/accelerate, Lightning-AI/pytorch-lightning',
    version: 'transformers 5.x (00349ae8); accelerate 16cb6eb8; Lightning 2.6.5',
    source:
      'transformers trainer.py (_fsdp_qlora_plugin_updates / accelerate FSDP plugin from fsdp_config), accelerate utils/dataclasses.py FullyShardedDataParallelPlugin.set_auto_wrap_policy, Lightning strategies/fsdp.py _auto_wrap_policy_kwargs',
  } satisfies Upstream,
  hf(fsdp: string, layerClasses: string[] | undefined, modelLayer: string | null): Wrapped {
    if (!fsdp.split(' ').includes('auto_wrap')) return 'model'
    // Without transformer_layer_cls_to_wrap the Trainer wraps the model's _no_split_modules: its decoder layer.
    if (!layerClasses) return 'layer'
    return modelLayer !== null && layerClasses.includes(modelLayer) ? 'layer' : 'model'
  },
  accelerate(policy: string): Wrapped {
    return policy === 'TRANSFORMER_BASED_WRAP' || policy === 'SIZE_BASED_WRAP' ? 'layer' : 'model'
  },
  lightning(policy: string[] | undefined, modelLayerPath: string | null): Wrapped {
    return policy && modelLayerPath !== null && policy.includes(modelLayerPath) ? 'layer' : 'model'
  },
}

// ---------------------------------------------------------------------------------------------------------------
// Learning-rate schedules and process-group backends
// ---------------------------------------------------------------------------------------------------------------

/** transformers' get_cosine_schedule_with_warmup (num_cycles 0.5): the multiplier of the peak rate at a step. */
export function hfCosineWithWarmup(step: number, warmup: number, total: number): number {
  if (step < warmup) return step / Math.max(1, warmup)
  const progress = (step - warmup) / Math.max(1, total - warmup)
  return Math.max(0, 0.5 * (1 + Math.cos(Math.PI * progress)))
}

/** DeepSpeed's WarmupCosineLR.get_lr_ratio (deepspeed/runtime/lr_schedules.py, v0.19.5). */
export function deepSpeedWarmupCosine(
  step: number,
  p: {
    total_num_steps: number
    warmup_num_steps: number
    warmup_type?: string
    warmup_min_ratio?: number
    cos_min_ratio?: number
  },
): number {
  const warmup = p.warmup_num_steps
  const minRatio = p.warmup_min_ratio ?? 0
  if (step < warmup) {
    const ratio = (p.warmup_type ?? 'log') === 'log' ? Math.log(step + 1) / Math.log(warmup) : step / warmup
    return minRatio + ratio * (1 - minRatio)
  }
  const cosMin = p.cos_min_ratio ?? 0.0001
  const realStep = step - warmup + 1
  const ratio = (1 + Math.cos((Math.PI * realStep) / (p.total_num_steps - warmup))) / 2
  return Math.max(0, cosMin + (1 - cosMin) * ratio)
}

/** torch.distributed's registered backends (distributed_c10d.Backend): ROCm builds provide RCCL as `nccl`. */
export const TORCH_BACKENDS = {
  upstream: {
    project: 'pytorch/pytorch',
    version: '2.5',
    source: 'torch/distributed/distributed_c10d.py: Backend.backend_list',
  } satisfies Upstream,
  names: ['undefined', 'gloo', 'nccl', 'ucc', 'mpi', 'xccl'],
}

/** Every table, for the test that each names its upstream source and version. */
export const BEHAVIOUR_TABLES: Record<string, { upstream: Upstream }> = {
  DEEPSPEED_RUNNER,
  SRUN_EXPORT,
  HF_TRAINER_PRECISION,
  ACCELERATE_PRECISION,
  DEEPSPEED_PRECISION,
  LIGHTNING_PRECISION,
  FSDP_SHARDING,
  ZERO_SHARDING,
  WRAP_POLICIES,
  TORCH_BACKENDS,
}
