import { processesPerNode, type TrainingPlan } from '@rigfit/core'
import { z } from 'zod'
import {
  type Engine,
  engineOf,
  fsdpShardingStrategy,
  NVME_OFFLOAD_PATH,
  warnFsdpAsZero3,
  warnNvmePath,
} from '../engine.js'
import {
  ADAPTER_CONFIG_FILE,
  baseModelId,
  loadDtypeName,
  methodFiles,
  methodSummary,
  QUANTIZATION_CONFIG_FILE,
} from '../method.js'
import { ATTN_IMPLEMENTATION, layerClassPath } from '../model-classes.js'
import { checkpointDir, checkpointEverySteps, DEFAULT_SEED, optimizationOf } from '../plan-facts.js'
import { provenance, textFile, yamlDocument } from '../render.js'
import type { Exporter, FormatContext } from '../types.js'
import { modelSplitReason, readStructured } from '../validate.js'

export const LIGHTNING_FILE = 'lightning_config.yaml'

const PRECISION: Record<TrainingPlan['settings']['precision'], string> = {
  fp32: '32-true',
  'fp16-mixed': '16-mixed',
  'bf16-mixed': 'bf16-mixed',
  'fp16-true': '16-true',
  'bf16-true': 'bf16-true',
}

const OffloadDevice = z.enum(['cpu', 'nvme'])
const FsdpStrategyObject = z.strictObject({
  class_path: z.literal('lightning.pytorch.strategies.FSDPStrategy'),
  init_args: z.strictObject({
    auto_wrap_policy: z.array(z.string().min(1)).min(1),
    sharding_strategy: z.enum(['FULL_SHARD', 'HYBRID_SHARD']),
    cpu_offload: z.boolean(),
    state_dict_type: z.literal('sharded'),
  }),
})
const StrategyObject = z.strictObject({
  class_path: z.literal('lightning.pytorch.strategies.DeepSpeedStrategy'),
  init_args: z.strictObject({
    stage: z.union([z.literal(1), z.literal(2), z.literal(3)]),
    offload_optimizer: z.boolean(),
    offload_parameters: z.boolean(),
    offload_optimizer_device: OffloadDevice,
    offload_params_device: OffloadDevice,
    nvme_path: z.string().optional(),
  }),
})

/** LightningCLI config: Trainer arguments under `trainer`, the DataModule's conventional init args under `data`. */
const LightningConfig = z.strictObject({
  seed_everything: z.number().int(),
  trainer: z.strictObject({
    accelerator: z.enum(['gpu', 'mps', 'cpu']),
    devices: z.number().int().positive(),
    num_nodes: z.number().int().positive(),
    strategy: z.union([z.string(), StrategyObject, FsdpStrategyObject]),
    precision: z.enum(['32-true', '16-mixed', 'bf16-mixed', '16-true', 'bf16-true']),
    accumulate_grad_batches: z.number().int().positive(),
    gradient_clip_val: z.number().nonnegative(),
    gradient_clip_algorithm: z.literal('norm'),
    max_steps: z.number().int().positive(),
    benchmark: z.boolean(),
    log_every_n_steps: z.number().int().positive(),
    default_root_dir: z.string(),
    callbacks: z.array(
      z.strictObject({
        class_path: z.literal('lightning.pytorch.callbacks.ModelCheckpoint'),
        init_args: z.strictObject({
          dirpath: z.string(),
          every_n_train_steps: z.number().int().positive(),
          save_last: z.boolean(),
          save_top_k: z.number().int(),
        }),
      }),
    ),
  }),
  optimizer: z
    .strictObject({
      class_path: z.literal('torch.optim.AdamW'),
      init_args: z.strictObject({
        lr: z.number().positive(),
        betas: z.tuple([z.number(), z.number()]),
        eps: z.number().positive(),
        weight_decay: z.number().nonnegative(),
      }),
    })
    .optional(),
  model: z
    .strictObject({
      warmup_steps: z.number().int().nonnegative().optional(),
      model_name_or_path: z.string().min(1).optional(),
      dtype: z.enum(['bfloat16', 'float16', 'float32']),
      attn_implementation: z.enum(['eager', 'sdpa', 'flash_attention_2']),
      adapter_config: z.literal(ADAPTER_CONFIG_FILE).optional(),
      quantization_config: z.literal(QUANTIZATION_CONFIG_FILE).optional(),
    })
    .optional(),
  data: z.strictObject({
    batch_size: z.number().int().positive(),
    num_workers: z.number().int().nonnegative(),
    pin_memory: z.boolean(),
    block_size: z.number().int().positive(),
  }),
  ckpt_path: z.string().optional(),
})
type LightningConfig = z.infer<typeof LightningConfig>

/**
 * The DeepSpeed strategies Lightning registers (DeepSpeedStrategy.register_strategies): stage and offload
 * devices each name stands for. Other combinations are written as a DeepSpeedStrategy object.
 */
const REGISTERED_DEEPSPEED: Array<{ name: string; stage: number; optimizer: string; params: string }> = [
  { name: 'deepspeed_stage_1', stage: 1, optimizer: 'none', params: 'none' },
  { name: 'deepspeed_stage_2', stage: 2, optimizer: 'none', params: 'none' },
  { name: 'deepspeed_stage_2_offload', stage: 2, optimizer: 'cpu', params: 'none' },
  { name: 'deepspeed_stage_3', stage: 3, optimizer: 'none', params: 'none' },
  { name: 'deepspeed_stage_3_offload', stage: 3, optimizer: 'cpu', params: 'cpu' },
  { name: 'deepspeed_stage_3_offload_nvme', stage: 3, optimizer: 'nvme', params: 'nvme' },
]

function deepspeedStrategy(engine: Engine): LightningConfig['trainer']['strategy'] {
  const registered = REGISTERED_DEEPSPEED.find(
    (r) =>
      r.stage === engine.stage && r.optimizer === engine.optimizerOffload && r.params === engine.paramOffload,
  )
  if (registered) return registered.name
  const nvme = engine.optimizerOffload === 'nvme' || engine.paramOffload === 'nvme'
  return {
    class_path: 'lightning.pytorch.strategies.DeepSpeedStrategy',
    init_args: {
      stage: engine.stage as 1 | 2 | 3,
      offload_optimizer: engine.optimizerOffload !== 'none',
      offload_parameters: engine.paramOffload !== 'none',
      offload_optimizer_device: engine.optimizerOffload === 'nvme' ? 'nvme' : 'cpu',
      offload_params_device: engine.paramOffload === 'nvme' ? 'nvme' : 'cpu',
      ...(nvme ? { nvme_path: NVME_OFFLOAD_PATH } : {}),
    },
  }
}

/**
 * FSDP wrapping each decoder layer on its own (the registered `fsdp` names no wrap policy, so the whole model
 * would be one unit, gathered at once), sharded within a node and replicated across nodes (HYBRID_SHARD) on
 * several, as every format shards it. cpu_offload is CPUOffload(offload_params=True): parameters and gradients.
 */
function fsdpStrategy(plan: TrainingPlan, engine: Engine, warn: FormatContext['warn']) {
  const layer = layerClassPath(plan.model)
  if (layer === null) {
    warn(
      'fsdp-wrap-unknown-layer',
      `rigfit does not know the layer class of model_type ${plan.model.modelType}: Lightning's FSDP wraps the whole model as one unit (all parameters gathered at once, more memory than planned) unless the LightningModule's configure_model wraps each layer.`,
    )
    return engine.paramOffload === 'cpu' ? 'fsdp_cpu_offload' : 'fsdp'
  }
  return {
    class_path: 'lightning.pytorch.strategies.FSDPStrategy' as const,
    init_args: {
      auto_wrap_policy: [layer],
      sharding_strategy: fsdpShardingStrategy(plan),
      cpu_offload: engine.paramOffload === 'cpu',
      state_dict_type: 'sharded' as const,
    },
  }
}

/** Lightning's strategy for a plan: a registered name, or a DeepSpeedStrategy / FSDPStrategy object. */
export function lightningStrategy(
  plan: TrainingPlan,
  warn: FormatContext['warn'] = () => {},
): LightningConfig['trainer']['strategy'] {
  const engine = engineOf(plan)
  switch (engine.kind) {
    case 'deepspeed':
      return deepspeedStrategy(engine)
    case 'fsdp':
      return fsdpStrategy(plan, engine, warn)
    case 'ddp':
      return 'ddp'
    default:
      return 'auto'
  }
}

/**
 * The LightningModule's conventional init args: the model a fine-tune starts from, the dtype to load it in and its
 * PEFT configs.
 */
function modelSection(plan: TrainingPlan): LightningConfig['model'] {
  const base = baseModelId(plan)
  const model: NonNullable<LightningConfig['model']> = {
    dtype: loadDtypeName(plan),
    attn_implementation: ATTN_IMPLEMENTATION[plan.settings.attention],
  }
  if (base) model.model_name_or_path = base
  if (plan.settings.lora) model.adapter_config = ADAPTER_CONFIG_FILE
  if (plan.settings.quant !== 'none') model.quantization_config = QUANTIZATION_CONFIG_FILE
  return model
}

function buildConfig(plan: TrainingPlan, ctx: FormatContext): LightningConfig {
  const s = plan.settings
  if (s.tf32) {
    ctx.warn(
      'lightning-tf32',
      'Lightning has no TF32 switch; call torch.set_float32_matmul_precision("high") in the script (the pytorch export does).',
    )
  }
  // Phase B resumes phase A's last checkpoint; Lightning counts steps from the restored step.
  const stepsBefore = ctx.resume?.stepsBefore ?? 0
  const config: LightningConfig = {
    seed_everything: DEFAULT_SEED,
    trainer: {
      accelerator: s.device === 'cpu' ? 'cpu' : s.device === 'mps' ? 'mps' : 'gpu',
      devices: processesPerNode(s),
      num_nodes: s.nodes,
      strategy: lightningStrategy(plan, ctx.warn),
      precision: PRECISION[s.precision] as LightningConfig['trainer']['precision'],
      accumulate_grad_batches: s.gradAccum,
      gradient_clip_val: optimizationOf(plan).gradClip,
      gradient_clip_algorithm: 'norm',
      max_steps: stepsBefore + Math.max(1, plan.time.steps),
      benchmark: s.cudnnBenchmark,
      log_every_n_steps: 10,
      default_root_dir: checkpointDir(ctx.runName),
      callbacks: [
        {
          class_path: 'lightning.pytorch.callbacks.ModelCheckpoint',
          // Without a monitored metric Lightning keeps the latest checkpoint; save_last adds last.ckpt for resuming.
          init_args: {
            dirpath: checkpointDir(ctx.runName),
            every_n_train_steps: checkpointEverySteps(plan),
            save_last: true,
            save_top_k: 1,
          },
        },
      ],
    },
    data: {
      batch_size: s.microBatch,
      num_workers: s.dataloader.workers,
      pin_memory: s.dataloader.pinMemory,
      block_size: s.seq,
    },
  }
  const model = modelSection(plan)
  if (model) config.model = model
  // LightningCLI builds this optimizer for the module; its warm-up is the module's own init argument.
  const opt = optimizationOf(plan)
  if (s.optimizer === 'adamw') {
    config.optimizer = {
      class_path: 'torch.optim.AdamW',
      init_args: {
        lr: s.learningRate,
        betas: [opt.beta1, opt.beta2],
        eps: opt.epsilon,
        weight_decay: opt.weightDecay,
      },
    }
  }
  if (config.model) config.model.warmup_steps = opt.warmupSteps
  if (ctx.resume) config.ckpt_path = `${ctx.resume.from}/last.ckpt`
  return config
}

export const lightningFormat: Exporter = {
  name: 'lightning',
  description:
    'LightningCLI YAML: Trainer arguments (precision, accumulate_grad_batches, strategy, devices, num_nodes)',
  unsupportedReason: (plan) => modelSplitReason(plan, 'Lightning'),
  render(plan, ctx) {
    const engine = engineOf(plan)
    warnFsdpAsZero3(engine, ctx.warn)
    warnNvmePath(engine, ctx.warn)
    const header = [
      provenance(plan),
      `Method: ${methodSummary(plan)}; sequence length ${plan.settings.seq}.`,
      'Use: python train.py fit --config lightning_config.yaml (LightningCLI).',
      '`data` holds the micro-batch, loader settings and sequence length (block_size) for a LightningDataModule taking those arguments.',
    ]
    if (plan.settings.lora || plan.settings.quant !== 'none')
      header.push(
        '`model` names the base model and the PEFT LoraConfig / BitsAndBytesConfig files beside this one for a LightningModule that loads them.',
      )
    return [
      textFile(LIGHTNING_FILE, yamlDocument(buildConfig(plan, ctx), header)),
      ...methodFiles(plan, engine, ctx.warn),
    ]
  },
  validate(files, plan) {
    const read = readStructured(files, LIGHTNING_FILE, 'yaml', LightningConfig)
    const problems = [...read.problems]
    if (problems.length > 0) return problems
    const config = read.value as LightningConfig
    const t = config.trainer
    if (
      t.devices * t.num_nodes * t.accumulate_grad_batches * config.data.batch_size !==
      plan.settings.effectiveBatch
    ) {
      problems.push(
        `${LIGHTNING_FILE}: devices x num_nodes x accumulate_grad_batches x batch_size != effective batch ${plan.settings.effectiveBatch}`,
      )
    }
    return problems
  },
}
