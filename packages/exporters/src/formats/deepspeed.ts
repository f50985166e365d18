import type { TrainingPlan } from '@rigfit/core'
import { z } from 'zod'
import {
  ADAM_BETAS,
  ADAM_EPSILON,
  GRAD_CLIP_NORM,
  halfType,
  processesPerNode,
  WEIGHT_DECAY,
  warmupSteps,
  worldSize,
} from '../plan-facts.js'
import { commentLines, jsonDocument, provenance, SCRIPT_DIR_LINE, shellQuote, textFile } from '../render.js'
import type { Exporter, ExportFile, FormatContext } from '../types.js'
import { modelSplitReason, validateStructured } from '../validate.js'

export const DS_CONFIG_FILE = 'ds_config.json'
export const DEFAULT_MASTER_PORT = 29500

/** ZeRO stage for a plan: its ZeRO stage, 3 for FSDP (both shard parameters, gradients and states), else 0. */
export function zeroStage(plan: TrainingPlan): 0 | 1 | 2 | 3 {
  switch (plan.settings.sharding) {
    case 'zero1':
      return 1
    case 'zero2':
      return 2
    case 'zero3':
    case 'fsdp':
      return 3
    default:
      return 0
  }
}

const Enabled = z.strictObject({ enabled: z.literal(true) })
const Fp16 = z.strictObject({
  enabled: z.literal(true),
  loss_scale: z.number().nonnegative(),
  initial_scale_power: z.number().int().positive(),
  loss_scale_window: z.number().int().positive(),
  hysteresis: z.number().int().positive(),
  min_loss_scale: z.number().positive(),
})
const OffloadDevice = z.strictObject({ device: z.enum(['cpu', 'nvme', 'none']), pin_memory: z.boolean() })

/** The subset of the DeepSpeed config rigfit writes, with DeepSpeed's own key names and rules. */
const DeepSpeedConfig = z.strictObject({
  train_batch_size: z.number().int().positive(),
  train_micro_batch_size_per_gpu: z.number().int().positive(),
  gradient_accumulation_steps: z.number().int().positive(),
  gradient_clipping: z.number().nonnegative(),
  steps_per_print: z.number().int().positive(),
  wall_clock_breakdown: z.boolean(),
  bf16: Enabled.optional(),
  fp16: Fp16.optional(),
  zero_optimization: z.strictObject({
    stage: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]),
    overlap_comm: z.boolean().optional(),
    contiguous_gradients: z.boolean().optional(),
    reduce_scatter: z.boolean().optional(),
    reduce_bucket_size: z.number().int().positive().optional(),
    allgather_partitions: z.boolean().optional(),
    allgather_bucket_size: z.number().int().positive().optional(),
    offload_optimizer: OffloadDevice.optional(),
    offload_param: OffloadDevice.optional(),
    stage3_prefetch_bucket_size: z.number().int().positive().optional(),
    stage3_param_persistence_threshold: z.number().int().positive().optional(),
    stage3_gather_16bit_weights_on_model_save: z.boolean().optional(),
  }),
  optimizer: z
    .strictObject({
      type: z.literal('AdamW'),
      params: z.strictObject({
        lr: z.number().positive(),
        betas: z.tuple([z.number(), z.number()]),
        eps: z.number().positive(),
        weight_decay: z.number().nonnegative(),
      }),
    })
    .optional(),
  scheduler: z
    .strictObject({
      type: z.literal('WarmupCosineLR'),
      params: z.strictObject({
        total_num_steps: z.number().int().positive(),
        warmup_num_steps: z.number().int().nonnegative(),
      }),
    })
    .optional(),
})
export type DeepSpeedConfig = z.infer<typeof DeepSpeedConfig>

/** The DeepSpeed config JSON for a plan; also used by the HF export for ZeRO plans. */
export function buildDeepSpeedConfig(plan: TrainingPlan, ctx: FormatContext): DeepSpeedConfig {
  const s = plan.settings
  const stage = zeroStage(plan)
  const half = halfType(s.precision)
  const hidden = plan.model.hidden
  const zero: DeepSpeedConfig['zero_optimization'] = { stage }
  if (stage > 0) {
    // Bucket sizes follow the hidden-size formulas the HF integration uses for its "auto" values.
    Object.assign(zero, {
      overlap_comm: true,
      contiguous_gradients: true,
      reduce_bucket_size: hidden * hidden,
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
      stage3_prefetch_bucket_size: Math.round(0.9 * hidden * hidden),
      stage3_param_persistence_threshold: 10 * hidden,
      stage3_gather_16bit_weights_on_model_save: true,
    })
  }
  if (s.offload !== 'none') zero.offload_optimizer = { device: 'cpu', pin_memory: true }
  if (s.offload === 'all') zero.offload_param = { device: 'cpu', pin_memory: true }
  if (s.sharding === 'fsdp') {
    ctx.warn(
      'deepspeed-fsdp-as-zero3',
      'The plan shards with FSDP; DeepSpeed expresses the same sharding as ZeRO stage 3.',
    )
  }

  const config: DeepSpeedConfig = {
    train_batch_size: s.microBatch * s.gradAccum * worldSize(s),
    train_micro_batch_size_per_gpu: s.microBatch,
    gradient_accumulation_steps: s.gradAccum,
    gradient_clipping: GRAD_CLIP_NORM,
    steps_per_print: 10,
    wall_clock_breakdown: false,
    zero_optimization: zero,
  }
  if (half === 'bf16') config.bf16 = { enabled: true }
  if (half === 'fp16') {
    // Dynamic loss scaling (loss_scale 0) starting at 2^16: DeepSpeed's documented defaults for fp16.
    config.fp16 = {
      enabled: true,
      loss_scale: 0,
      initial_scale_power: 16,
      loss_scale_window: 1000,
      hysteresis: 2,
      min_loss_scale: 1,
    }
  }
  if (s.optimizer === 'adamw') {
    config.optimizer = {
      type: 'AdamW',
      params: {
        lr: s.learningRate,
        betas: [ADAM_BETAS[0], ADAM_BETAS[1]],
        eps: ADAM_EPSILON,
        weight_decay: WEIGHT_DECAY,
      },
    }
    config.scheduler = {
      type: 'WarmupCosineLR',
      params: { total_num_steps: Math.max(1, plan.time.steps), warmup_num_steps: warmupSteps(plan) },
    }
  } else {
    ctx.warn(
      'deepspeed-client-optimizer',
      `DeepSpeed has no built-in ${s.optimizer}; the config leaves the optimizer to the training script (pass it to deepspeed.initialize).`,
    )
  }
  return config
}

/** DeepSpeed hostfile lines: one per node with its GPU count. */
export function hostfileLines(plan: TrainingPlan, ctx: FormatContext): string[] {
  const slots = processesPerNode(plan.settings)
  const hosts =
    ctx.hosts.length > 0 ? ctx.hosts : Array.from({ length: plan.settings.nodes }, (_, i) => `node${i + 1}`)
  if (ctx.hosts.length === 0) {
    ctx.warn(
      'deepspeed-hostfile-names',
      `The hostfile names the nodes ${hosts.join(', ')}; replace them with your hosts' names, or export again with --hosts.`,
    )
  }
  return hosts.map((host) => `${host} slots=${slots}`)
}

function launchScript(plan: TrainingPlan, multiNode: boolean): string {
  const s = plan.settings
  const launcher = multiNode
    ? [
        '--hostfile "$HERE/hostfile"',
        `--num_nodes ${s.nodes}`,
        `--num_gpus ${processesPerNode(s)}`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
        '--master_addr "${MASTER_ADDR:?set MASTER_ADDR to the address of the first host in the hostfile}"',
        `--master_port "\${MASTER_PORT:-${DEFAULT_MASTER_PORT}}"`,
      ]
    : [`--num_gpus ${processesPerNode(s)}`]
  const header = [
    provenance(plan),
    multiNode
      ? `Run on the first host of the hostfile; DeepSpeed reaches the other ${s.nodes - 1} over ssh (pdsh).`
      : 'Run on the training machine.',
    'Usage: ./launch_deepspeed.sh train.py [script arguments]',
    `The script receives --deepspeed --deepspeed_config ${DS_CONFIG_FILE} (deepspeed.add_config_arguments).`,
  ]
  return [
    '#!/usr/bin/env bash',
    commentLines(header, '# '),
    'set -euo pipefail',
    SCRIPT_DIR_LINE,
    `export OMP_NUM_THREADS=${shellQuote(String(s.threads))}`,
    `exec deepspeed ${launcher.join(' \\\n  ')} \\\n  "$@" --deepspeed --deepspeed_config "$HERE/${DS_CONFIG_FILE}"`,
    '',
  ].join('\n')
}

export const deepspeedFormat: Exporter = {
  name: 'deepspeed',
  description: 'DeepSpeed config JSON (ZeRO stage, offload, precision, batch), launcher script and hostfile',
  unsupportedReason(plan) {
    if (plan.settings.device !== 'cuda' && plan.settings.device !== 'rocm') {
      return `DeepSpeed trains on CUDA or ROCm GPUs; this plan is for ${plan.settings.device}`
    }
    return modelSplitReason(plan, 'DeepSpeed')
  },
  render(plan, ctx) {
    const multiNode = plan.settings.nodes > 1
    const files: ExportFile[] = [textFile(DS_CONFIG_FILE, jsonDocument(buildDeepSpeedConfig(plan, ctx)))]
    if (multiNode) files.push(textFile('hostfile', `${hostfileLines(plan, ctx).join('\n')}\n`))
    files.push(textFile('launch_deepspeed.sh', launchScript(plan, multiNode), true))
    return files
  },
  validate(files, plan) {
    return validateDeepSpeedConfig(files, plan)
  },
}

/** Schema plus DeepSpeed's own batch rule: train_batch_size = micro x accumulation x world size. */
export function validateDeepSpeedConfig(files: ExportFile[], plan: TrainingPlan): string[] {
  const problems = validateStructured(files, DS_CONFIG_FILE, 'json', DeepSpeedConfig)
  if (problems.length > 0) return problems
  const config = JSON.parse(files.find((f) => f.path === DS_CONFIG_FILE)?.content ?? '{}') as DeepSpeedConfig
  const world = worldSize(plan.settings)
  if (
    config.train_batch_size !==
    config.train_micro_batch_size_per_gpu * config.gradient_accumulation_steps * world
  ) {
    problems.push(
      `${DS_CONFIG_FILE}: train_batch_size ${config.train_batch_size} != micro x accumulation x world size ${world}`,
    )
  }
  if (config.bf16 && config.fp16) problems.push(`${DS_CONFIG_FILE}: bf16 and fp16 are both enabled`)
  if (config.zero_optimization.offload_param && config.zero_optimization.stage !== 3) {
    problems.push(`${DS_CONFIG_FILE}: offload_param needs ZeRO stage 3`)
  }
  return problems
}
