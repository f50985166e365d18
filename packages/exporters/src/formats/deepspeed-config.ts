import { effectiveBatchOf, halfType, type TrainingPlan, worldSize } from '@rigfit/core'
import { z } from 'zod'
import { type Engine, engineOf, NVME_OFFLOAD_PATH, type OffloadTarget } from '../engine.js'
import { optimizationOf } from '../plan-facts.js'
import type { ExportFile, FormatContext } from '../types.js'
import { validateStructured } from '../validate.js'

export const DS_CONFIG_FILE = 'ds_config.json'

/**
 * Who fills the values the config shares with the trainer's own arguments. `deepspeed`: the config is complete.
 * `hf-trainer`: the HF Trainer replaces every `"auto"` with its TrainingArguments value (HfTrainerDeepSpeedConfig
 * `trainer_config_process` / `trainer_config_finalize`), so those values have one source, training_args.json.
 */
export type DeepSpeedFlavor = 'deepspeed' | 'hf-trainer'

/** ZeRO stage for a plan: the stage its engine runs, or 3 for an FSDP plan (the same sharding), else 0. */
export function zeroStage(plan: TrainingPlan): 0 | 1 | 2 | 3 {
  const engine = engineOf(plan)
  if (engine.kind === 'deepspeed') return engine.stage
  return engine.kind === 'fsdp' ? 3 : 0
}

const Auto = z.literal('auto')
const num = (flavor: DeepSpeedFlavor) => (flavor === 'hf-trainer' ? Auto : z.number())

const Offload = z.strictObject({
  device: z.enum(['cpu', 'nvme']),
  pin_memory: z.boolean(),
  nvme_path: z.string().optional(),
})

/** The subset of the DeepSpeed config rigfit writes, with DeepSpeed's own key names and rules. */
function buildConfigSchema(flavor: DeepSpeedFlavor) {
  const n = num(flavor)
  return z.strictObject({
    train_batch_size: flavor === 'hf-trainer' ? Auto : z.number().int().positive(),
    train_micro_batch_size_per_gpu: flavor === 'hf-trainer' ? Auto : z.number().int().positive(),
    gradient_accumulation_steps: flavor === 'hf-trainer' ? Auto : z.number().int().positive(),
    gradient_clipping: n,
    steps_per_print: z.number().int().positive(),
    wall_clock_breakdown: z.boolean(),
    zero_force_ds_cpu_optimizer: z.literal(false).optional(),
    bf16: z.strictObject({ enabled: flavor === 'hf-trainer' ? Auto : z.literal(true) }).optional(),
    fp16: z
      .strictObject({
        enabled: flavor === 'hf-trainer' ? Auto : z.literal(true),
        loss_scale: z.number().nonnegative(),
        initial_scale_power: z.number().int().positive(),
        loss_scale_window: z.number().int().positive(),
        hysteresis: z.number().int().positive(),
        min_loss_scale: z.number().positive(),
      })
      .optional(),
    zero_optimization: z.strictObject({
      stage: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]),
      overlap_comm: z.boolean().optional(),
      contiguous_gradients: z.boolean().optional(),
      reduce_scatter: z.boolean().optional(),
      reduce_bucket_size: n.optional(),
      allgather_partitions: z.boolean().optional(),
      allgather_bucket_size: z.number().int().positive().optional(),
      offload_optimizer: Offload.optional(),
      offload_param: Offload.optional(),
      stage3_prefetch_bucket_size: n.optional(),
      stage3_param_persistence_threshold: n.optional(),
      stage3_gather_16bit_weights_on_model_save: z.boolean().optional(),
    }),
    optimizer: z
      .strictObject({
        type: z.literal('AdamW'),
        params: z.strictObject({
          lr: n,
          betas: flavor === 'hf-trainer' ? Auto : z.tuple([z.number(), z.number()]),
          eps: n,
          weight_decay: n,
        }),
      })
      .optional(),
    scheduler: z
      .strictObject({
        type: z.literal('WarmupCosineLR'),
        params: z.strictObject({
          total_num_steps: z.number().int().positive(),
          warmup_num_steps: z.number().int().nonnegative(),
          warmup_type: z.literal('linear'),
          warmup_min_ratio: z.literal(0),
          cos_min_ratio: z.literal(0),
        }),
      })
      .optional(),
  })
}

// Built once per flavor: zod compiles a schema on its first parse, and every export validates its config.
const CONFIG_SCHEMAS = {
  deepspeed: buildConfigSchema('deepspeed'),
  'hf-trainer': buildConfigSchema('hf-trainer'),
}

export type DeepSpeedConfig = Record<string, unknown> & { zero_optimization: Record<string, unknown> }

function offloadEntry(target: OffloadTarget): Record<string, unknown> | undefined {
  if (target === 'none') return undefined
  return target === 'nvme'
    ? { device: 'nvme', nvme_path: NVME_OFFLOAD_PATH, pin_memory: true }
    : { device: 'cpu', pin_memory: true }
}

function zeroSection(plan: TrainingPlan, engine: Engine, flavor: DeepSpeedFlavor, stage: 0 | 1 | 2 | 3) {
  const hidden = plan.model.hidden
  const hf = flavor === 'hf-trainer'
  const zero: Record<string, unknown> = { stage }
  if (stage > 0) {
    // Bucket sizes follow the hidden-size formulas the HF integration fills its "auto" values with.
    Object.assign(zero, {
      overlap_comm: true,
      contiguous_gradients: true,
      reduce_bucket_size: hf ? 'auto' : hidden * hidden,
    })
  }
  if (stage === 1 || stage === 2)
    Object.assign(zero, {
      allgather_partitions: true,
      allgather_bucket_size: 500_000_000,
      reduce_scatter: true,
    })
  if (stage === 3) {
    Object.assign(zero, {
      stage3_prefetch_bucket_size: hf ? 'auto' : Math.round(0.9 * hidden * hidden),
      stage3_param_persistence_threshold: hf ? 'auto' : 10 * hidden,
      stage3_gather_16bit_weights_on_model_save: true,
    })
  }
  const optimizer = offloadEntry(engine.optimizerOffload)
  const params = offloadEntry(engine.paramOffload)
  if (optimizer) zero.offload_optimizer = optimizer
  if (params) zero.offload_param = params
  return zero
}

/** DeepSpeed's own optimizers run offloaded states on the CPU; any other needs the check switched off. */
const DEEPSPEED_OPTIMIZER = 'adamw'

/**
 * The DeepSpeed config JSON for a plan. The deepspeed, torchrun and slurm formats write the complete values;
 * the HF export leaves to the Trainer what TrainingArguments already states (flavor `hf-trainer`).
 */
export function buildDeepSpeedConfig(
  plan: TrainingPlan,
  ctx: FormatContext,
  flavor: DeepSpeedFlavor = 'deepspeed',
): DeepSpeedConfig {
  const s = plan.settings
  const engine = engineOf(plan)
  const stage = zeroStage(plan)
  const half = halfType(s.precision)
  const hf = flavor === 'hf-trainer'
  const opt = optimizationOf(plan)
  const config: DeepSpeedConfig = {
    train_batch_size: hf ? 'auto' : effectiveBatchOf(s),
    train_micro_batch_size_per_gpu: hf ? 'auto' : s.microBatch,
    gradient_accumulation_steps: hf ? 'auto' : s.gradAccum,
    gradient_clipping: hf ? 'auto' : opt.gradClip,
    steps_per_print: 10,
    wall_clock_breakdown: false,
    zero_optimization: zeroSection(plan, engine, flavor, stage),
  }
  if (half === 'bf16') config.bf16 = { enabled: hf ? 'auto' : true }
  if (half === 'fp16') {
    // Dynamic loss scaling (loss_scale 0) starting at 2^16: DeepSpeed's documented defaults for fp16.
    config.fp16 = {
      enabled: hf ? 'auto' : true,
      loss_scale: 0,
      initial_scale_power: 16,
      loss_scale_window: 1000,
      hysteresis: 2,
      min_loss_scale: 1,
    }
  }
  const offloading = engine.optimizerOffload !== 'none'
  if (s.optimizer === DEEPSPEED_OPTIMIZER) {
    config.optimizer = {
      type: 'AdamW',
      params: hf
        ? { lr: 'auto', betas: 'auto', eps: 'auto', weight_decay: 'auto' }
        : {
            lr: s.learningRate,
            betas: [opt.beta1, opt.beta2],
            eps: opt.epsilon,
            weight_decay: opt.weightDecay,
          },
    }
    // The HF Trainer builds the schedule from lr_scheduler_type and warmup_steps when the config has none.
    if (!hf) {
      config.scheduler = {
        type: 'WarmupCosineLR',
        // The hf export's schedule (transformers' cosine with warm-up): linear warm-up from 0, cosine down to 0.
        // WarmupCosineLR's defaults differ (log warm-up, a floor of 1e-4 of the peak).
        params: {
          total_num_steps: Math.max(1, plan.time.steps),
          warmup_num_steps: opt.warmupSteps,
          warmup_type: 'linear',
          warmup_min_ratio: 0,
          cos_min_ratio: 0,
        },
      }
    }
  } else {
    ctx.warn(
      'deepspeed-client-optimizer',
      `DeepSpeed has no built-in ${s.optimizer}; the config leaves the optimizer to the training script${hf ? ' (the Trainer creates it from training_args.json)' : ' (pass it to deepspeed.initialize)'}.`,
    )
    if (offloading) {
      // DeepSpeed refuses a client optimizer with offloaded states unless this check is off.
      config.zero_force_ds_cpu_optimizer = false
      ctx.warn(
        'deepspeed-offload-client-optimizer',
        `The plan offloads the optimizer states of ${s.optimizer}, which DeepSpeed does not implement: the ${s.optimizer} step then runs on the CPU copies, slower than DeepSpeed's CPU Adam; check it is supported on the CPU before a long run.`,
      )
    }
  }
  return config
}

/** Schema plus DeepSpeed's own rules: the batch identity, one half type, parameter offload only at stage 3. */
export function validateDeepSpeedConfig(
  files: ExportFile[],
  plan: TrainingPlan,
  flavor: DeepSpeedFlavor = 'deepspeed',
): string[] {
  const problems = validateStructured(files, DS_CONFIG_FILE, 'json', CONFIG_SCHEMAS[flavor])
  if (problems.length > 0) return problems
  const config = JSON.parse(files.find((f) => f.path === DS_CONFIG_FILE)?.content ?? '{}') as {
    train_batch_size: number | 'auto'
    train_micro_batch_size_per_gpu: number | 'auto'
    gradient_accumulation_steps: number | 'auto'
    bf16?: object
    fp16?: object
    zero_optimization: {
      stage: number
      offload_param?: { device: string }
      offload_optimizer?: { device: string }
    }
  }
  const world = worldSize(plan.settings)
  if (
    flavor === 'deepspeed' &&
    config.train_batch_size !==
      (config.train_micro_batch_size_per_gpu as number) *
        (config.gradient_accumulation_steps as number) *
        world
  ) {
    problems.push(
      `${DS_CONFIG_FILE}: train_batch_size ${config.train_batch_size} != micro x accumulation x world size ${world}`,
    )
  }
  if (config.bf16 && config.fp16) problems.push(`${DS_CONFIG_FILE}: bf16 and fp16 are both enabled`)
  const zero = config.zero_optimization
  if (zero.offload_param && zero.stage !== 3)
    problems.push(`${DS_CONFIG_FILE}: offload_param needs ZeRO stage 3`)
  if (zero.offload_optimizer && zero.stage === 0)
    problems.push(`${DS_CONFIG_FILE}: offload_optimizer needs a ZeRO stage`)
  // DeepSpeed swaps optimizer states to NVMe only in stage 3 (ZeRO-Infinity).
  if (zero.offload_optimizer?.device === 'nvme' && zero.stage !== 3)
    problems.push(`${DS_CONFIG_FILE}: NVMe optimizer offload needs ZeRO stage 3`)
  return problems
}
