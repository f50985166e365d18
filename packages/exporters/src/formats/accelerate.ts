import { halfType, type TrainingPlan, worldSize } from '@rigfit/core'
import { z } from 'zod'
import { type Engine, engineOf, NVME_OFFLOAD_PATH, warnFsdpAsZero3, warnNvmePath } from '../engine.js'
import { methodFiles } from '../method.js'
import { isPureHalf, optimizationOf } from '../plan-facts.js'
import { provenance, textFile, yamlDocument } from '../render.js'
import type { Exporter, ExportFile, FormatContext } from '../types.js'
import { modelSplitReason, readStructured } from '../validate.js'
import {
  ACCELERATE_SCRIPT,
  accelerateFileName,
  launchScript,
  launchScriptProblems,
} from './accelerate-launch.js'

export { accelerateFileName }

import { DEFAULT_MASTER_PORT } from './deepspeed.js'
import { PLAN_FILE, planFile, validatePlanFile } from './rigfit.js'

const DistributedType = z.enum(['NO', 'MULTI_GPU', 'MULTI_CPU', 'FSDP', 'DEEPSPEED'])

/** The ClusterConfig keys rigfit writes; `accelerate launch` rejects any key outside ClusterConfig. */
const AccelerateConfig = z.strictObject({
  compute_environment: z.literal('LOCAL_MACHINE'),
  debug: z.boolean(),
  distributed_type: DistributedType,
  downcast_bf16: z.literal('no'),
  enable_cpu_affinity: z.boolean(),
  gpu_ids: z.literal('all').optional(),
  machine_rank: z.number().int().nonnegative(),
  main_training_function: z.literal('main'),
  mixed_precision: z.enum(['no', 'fp16', 'bf16']),
  num_machines: z.number().int().positive(),
  num_processes: z.number().int().positive(),
  rdzv_backend: z.enum(['static', 'c10d']),
  same_network: z.boolean(),
  use_cpu: z.boolean(),
  main_process_ip: z.string().optional(),
  main_process_port: z.number().int().positive().optional(),
  dynamo_config: z
    .strictObject({
      dynamo_backend: z.literal('INDUCTOR'),
      dynamo_mode: z.enum(['default', 'reduce-overhead', 'max-autotune']),
      dynamo_use_fullgraph: z.boolean(),
      dynamo_use_dynamic: z.boolean(),
    })
    .optional(),
  deepspeed_config: z
    .strictObject({
      gradient_accumulation_steps: z.number().int().positive(),
      gradient_clipping: z.number().nonnegative(),
      offload_optimizer_device: z.enum(['none', 'cpu', 'nvme']),
      offload_param_device: z.enum(['none', 'cpu', 'nvme']),
      offload_optimizer_nvme_path: z.string().optional(),
      offload_param_nvme_path: z.string().optional(),
      zero3_init_flag: z.boolean(),
      zero3_save_16bit_model: z.boolean().optional(),
      zero_stage: z.union([z.literal(1), z.literal(2), z.literal(3)]),
      deepspeed_multinode_launcher: z.literal('standard').optional(),
    })
    .optional(),
  fsdp_config: z
    .strictObject({
      fsdp_auto_wrap_policy: z.literal('TRANSFORMER_BASED_WRAP'),
      fsdp_backward_prefetch: z.literal('BACKWARD_PRE'),
      fsdp_cpu_ram_efficient_loading: z.boolean(),
      fsdp_forward_prefetch: z.boolean(),
      fsdp_offload_params: z.boolean(),
      fsdp_sharding_strategy: z.enum(['FULL_SHARD', 'HYBRID_SHARD']),
      fsdp_state_dict_type: z.literal('SHARDED_STATE_DICT'),
      fsdp_sync_module_states: z.boolean(),
      fsdp_use_orig_params: z.boolean(),
      fsdp_activation_checkpointing: z.boolean(),
    })
    .optional(),
})
type AccelerateConfig = z.infer<typeof AccelerateConfig>

function distributedType(plan: TrainingPlan, engine: Engine): z.infer<typeof DistributedType> {
  if (engine.kind === 'deepspeed') return 'DEEPSPEED'
  if (engine.kind === 'fsdp') return 'FSDP'
  if (engine.kind === 'local') return 'NO'
  return plan.settings.device === 'cpu' ? 'MULTI_CPU' : 'MULTI_GPU'
}

function buildConfig(
  plan: TrainingPlan,
  engine: Engine,
  machineRank: number,
  ctx: FormatContext,
): AccelerateConfig {
  const s = plan.settings
  const multiNode = s.nodes > 1
  const config: AccelerateConfig = {
    compute_environment: 'LOCAL_MACHINE',
    debug: false,
    distributed_type: distributedType(plan, engine),
    downcast_bf16: 'no',
    enable_cpu_affinity: false,
    machine_rank: machineRank,
    main_training_function: 'main',
    // accelerate hands mixed_precision to the script as ACCELERATE_MIXED_PRECISION, which turns on autocast (the
    // mixed variant): a pure-half plan says `no` and the script loads the weights in the half type itself.
    mixed_precision: isPureHalf(s.precision) ? 'no' : (halfType(s.precision) ?? 'no'),
    num_machines: s.nodes,
    // accelerate counts processes across all machines.
    num_processes: worldSize(s),
    // Static rendezvous at main_process_ip:port on the same network: what `accelerate config` writes for
    // several machines. launch_accelerate.sh passes --main_process_ip when the configs carry none.
    rdzv_backend: 'static',
    same_network: true,
    use_cpu: s.device === 'cpu',
  }
  if (s.device === 'cuda' || s.device === 'rocm') config.gpu_ids = 'all'
  if (multiNode) {
    const host = ctx.hosts[0]
    if (host) config.main_process_ip = host
    config.main_process_port = DEFAULT_MASTER_PORT
  }
  if (s.compile.enabled) {
    config.dynamo_config = {
      dynamo_backend: 'INDUCTOR',
      dynamo_mode: s.compile.mode,
      dynamo_use_fullgraph: false,
      dynamo_use_dynamic: false,
    }
  }
  if (engine.kind === 'deepspeed') {
    const stage = engine.stage as 1 | 2 | 3
    config.deepspeed_config = {
      gradient_accumulation_steps: s.gradAccum,
      gradient_clipping: optimizationOf(plan).gradClip,
      offload_optimizer_device: engine.optimizerOffload,
      offload_param_device: engine.paramOffload,
      zero3_init_flag: stage === 3,
      zero_stage: stage,
    }
    if (engine.optimizerOffload === 'nvme')
      config.deepspeed_config.offload_optimizer_nvme_path = NVME_OFFLOAD_PATH
    if (engine.paramOffload === 'nvme') config.deepspeed_config.offload_param_nvme_path = NVME_OFFLOAD_PATH
    if (stage === 3) config.deepspeed_config.zero3_save_16bit_model = true
    // `standard` starts each machine's processes from its own `accelerate launch` (torchrun-style, one config
    // per machine rank); the other launchers (pdsh, ...) would need a deepspeed_hostfile.
    if (multiNode) config.deepspeed_config.deepspeed_multinode_launcher = 'standard'
  }
  if (engine.kind === 'fsdp') {
    config.fsdp_config = {
      fsdp_auto_wrap_policy: 'TRANSFORMER_BASED_WRAP',
      fsdp_backward_prefetch: 'BACKWARD_PRE',
      fsdp_cpu_ram_efficient_loading: true,
      fsdp_forward_prefetch: false,
      // FSDP's CPU offload moves parameters and gradients: only a plan that offloads them sets it.
      fsdp_offload_params: engine.paramOffload === 'cpu',
      // Across nodes, shard inside each node and replicate between them: all-gathers stay on the fast links.
      fsdp_sharding_strategy: multiNode ? 'HYBRID_SHARD' : 'FULL_SHARD',
      fsdp_state_dict_type: 'SHARDED_STATE_DICT',
      fsdp_sync_module_states: true,
      fsdp_use_orig_params: true,
      fsdp_activation_checkpointing: s.gradCheckpointing,
    }
  }
  return config
}

export const accelerateFormat: Exporter = {
  name: 'accelerate',
  description:
    'accelerate config YAML (one per machine on several nodes), a launch script, the plan the script reads, PEFT/bitsandbytes configs for LoRA/QLoRA',
  unsupportedReason: (plan) => modelSplitReason(plan, 'accelerate'),
  render(plan, ctx) {
    const s = plan.settings
    const engine = engineOf(plan)
    warnFsdpAsZero3(engine, ctx.warn)
    warnNvmePath(engine, ctx.warn)
    if (s.nodes > 1 && ctx.hosts.length === 0) {
      ctx.warn(
        'accelerate-main-process-ip',
        `The multi-machine configs carry no main_process_ip: ${ACCELERATE_SCRIPT} stops unless MASTER_ADDR names machine 0 (export again with --hosts to write it into the configs).`,
      )
    }
    const files: ExportFile[] = []
    for (let rank = 0; rank < s.nodes; rank += 1) {
      const name = accelerateFileName(plan, rank)
      const header = [
        provenance(plan),
        `Launch: ./${ACCELERATE_SCRIPT} train.py (accelerate launch --config_file ${name} with RIGFIT_PLAN_FILE=${PLAN_FILE})`,
        `The training script sets its DataLoader batch_size to ${s.microBatch} and Accelerator(gradient_accumulation_steps=${s.gradAccum}), both read from ${PLAN_FILE}.`,
      ]
      if (s.nodes > 1)
        header.splice(1, 0, `Machine ${rank} of ${s.nodes}: run this on the machine with rank ${rank}.`)
      files.push(textFile(name, yamlDocument(buildConfig(plan, engine, rank, ctx), header)))
    }
    files.push(textFile(ACCELERATE_SCRIPT, launchScript(plan, ctx), true))
    files.push(...methodFiles(plan, engine, ctx.warn), planFile(plan))
    return files
  },
  validate(files, plan) {
    const problems: string[] = []
    for (let rank = 0; rank < plan.settings.nodes; rank += 1) {
      const name = accelerateFileName(plan, rank)
      const read = readStructured(files, name, 'yaml', AccelerateConfig)
      problems.push(...read.problems)
      if (read.problems.length > 0) continue
      const config = read.value as AccelerateConfig
      if (config.machine_rank !== rank)
        problems.push(`${name}: machine_rank ${config.machine_rank} != ${rank}`)
      if (config.num_processes !== worldSize(plan.settings))
        problems.push(`${name}: num_processes != world size`)
      if (config.distributed_type === 'DEEPSPEED' && !config.deepspeed_config)
        problems.push(`${name}: DEEPSPEED without deepspeed_config`)
      if (config.distributed_type === 'FSDP' && !config.fsdp_config)
        problems.push(`${name}: FSDP without fsdp_config`)
      const ds = config.deepspeed_config
      if (ds && config.num_machines > 1 && !ds.deepspeed_multinode_launcher)
        problems.push(`${name}: several machines without deepspeed_multinode_launcher`)
      if (ds?.offload_param_device !== undefined && ds.offload_param_device !== 'none' && ds.zero_stage !== 3)
        problems.push(`${name}: parameter offload needs ZeRO stage 3`)
    }
    return [...problems, ...launchScriptProblems(files, plan), ...validatePlanFile(files, plan)]
  },
}
