import type { TrainingPlan } from '@rigfit/core'
import { z } from 'zod'
import {
  checkpointDir,
  checkpointEverySteps,
  DEFAULT_SEED,
  GRAD_CLIP_NORM,
  processesPerNode,
} from '../plan-facts.js'
import { provenance, textFile, yamlDocument } from '../render.js'
import type { Exporter, FormatContext } from '../types.js'
import { modelSplitReason, parseYaml11, validateStructured } from '../validate.js'

export const LIGHTNING_FILE = 'lightning_config.yaml'

const PRECISION: Record<TrainingPlan['settings']['precision'], string> = {
  fp32: '32-true',
  'fp16-mixed': '16-mixed',
  'bf16-mixed': 'bf16-mixed',
  'fp16-true': '16-true',
  'bf16-true': 'bf16-true',
}

const StrategyObject = z.strictObject({
  class_path: z.literal('lightning.pytorch.strategies.DeepSpeedStrategy'),
  init_args: z.strictObject({
    stage: z.literal(3),
    offload_optimizer: z.boolean(),
    offload_parameters: z.boolean(),
  }),
})

/** LightningCLI config: Trainer arguments under `trainer`, the DataModule's conventional init args under `data`. */
const LightningConfig = z.strictObject({
  seed_everything: z.number().int(),
  trainer: z.strictObject({
    accelerator: z.enum(['gpu', 'mps', 'cpu']),
    devices: z.number().int().positive(),
    num_nodes: z.number().int().positive(),
    strategy: z.union([z.string(), StrategyObject]),
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
          every_n_train_steps: z.number().int().positive(),
          save_last: z.boolean(),
          save_top_k: z.number().int(),
        }),
      }),
    ),
  }),
  data: z.strictObject({
    batch_size: z.number().int().positive(),
    num_workers: z.number().int().nonnegative(),
    pin_memory: z.boolean(),
  }),
})
type LightningConfig = z.infer<typeof LightningConfig>

/** Lightning's registered strategy name for a plan (or a DeepSpeedStrategy object where no name fits). */
export function lightningStrategy(plan: TrainingPlan): LightningConfig['trainer']['strategy'] {
  const s = plan.settings
  switch (s.sharding) {
    case 'zero1':
    case 'zero2':
      return `deepspeed_stage_${s.sharding.slice(-1)}${s.offload === 'none' ? '' : '_offload'}`
    case 'zero3':
      if (s.offload === 'optimizer') {
        return {
          class_path: 'lightning.pytorch.strategies.DeepSpeedStrategy',
          init_args: { stage: 3, offload_optimizer: true, offload_parameters: false },
        }
      }
      return s.offload === 'all' ? 'deepspeed_stage_3_offload' : 'deepspeed_stage_3'
    case 'fsdp':
      return s.offload === 'none' ? 'fsdp' : 'fsdp_cpu_offload'
    default:
      return s.strategy === 'ddp' ? 'ddp' : 'auto'
  }
}

function buildConfig(plan: TrainingPlan, ctx: FormatContext): LightningConfig {
  const s = plan.settings
  if (s.tf32) {
    ctx.warn(
      'lightning-tf32',
      'Lightning has no TF32 switch; call torch.set_float32_matmul_precision("high") in the script (the pytorch export does).',
    )
  }
  return {
    seed_everything: DEFAULT_SEED,
    trainer: {
      accelerator: s.device === 'cpu' ? 'cpu' : s.device === 'mps' ? 'mps' : 'gpu',
      devices: processesPerNode(s),
      num_nodes: s.nodes,
      strategy: lightningStrategy(plan),
      precision: PRECISION[s.precision] as LightningConfig['trainer']['precision'],
      accumulate_grad_batches: s.gradAccum,
      gradient_clip_val: GRAD_CLIP_NORM,
      gradient_clip_algorithm: 'norm',
      max_steps: Math.max(1, plan.time.steps),
      benchmark: s.cudnnBenchmark,
      log_every_n_steps: 10,
      default_root_dir: checkpointDir(ctx.runName),
      callbacks: [
        {
          class_path: 'lightning.pytorch.callbacks.ModelCheckpoint',
          // Without a monitored metric Lightning keeps the latest checkpoint; save_last adds last.ckpt for resuming.
          init_args: { every_n_train_steps: checkpointEverySteps(plan), save_last: true, save_top_k: 1 },
        },
      ],
    },
    data: { batch_size: s.microBatch, num_workers: s.dataloader.workers, pin_memory: s.dataloader.pinMemory },
  }
}

export const lightningFormat: Exporter = {
  name: 'lightning',
  description:
    'LightningCLI YAML: Trainer arguments (precision, accumulate_grad_batches, strategy, devices, num_nodes)',
  unsupportedReason: (plan) => modelSplitReason(plan, 'Lightning'),
  render(plan, ctx) {
    const header = [
      provenance(plan),
      'Use: python train.py fit --config lightning_config.yaml (LightningCLI).',
      '`data` holds the micro-batch and loader settings for a LightningDataModule taking batch_size, num_workers and pin_memory.',
    ]
    return [textFile(LIGHTNING_FILE, yamlDocument(buildConfig(plan, ctx), header))]
  },
  validate(files, plan) {
    const problems = validateStructured(files, LIGHTNING_FILE, 'yaml', LightningConfig)
    if (problems.length > 0) return problems
    const config = parseYaml11(files.find((f) => f.path === LIGHTNING_FILE)?.content ?? '') as LightningConfig
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
