import { halfType, Precision, processesPerNode, type TrainingPlan } from '@rigfit/core'
import { stringify } from 'yaml'
import { z } from 'zod'
import { engineOf } from '../engine.js'
import {
  baseModelId,
  bnbQuantizationConfig,
  loadDtypeComment,
  loadDtypeName,
  peftAdapterConfig,
} from '../method.js'
import { ATTN_IMPLEMENTATION } from '../model-classes.js'
import { isPureHalf, optimizationOf, planSlug } from '../plan-facts.js'
import { commentLines, provenance, textFile } from '../render.js'
import type { Exporter, FormatContext } from '../types.js'
import { readStructured } from '../validate.js'

/**
 * The group file shape of the hardware configs this format targets (conf/hardware/gpu_4090.yaml), with the
 * precision as a string (bf16-mixed and fp16-mixed must differ) and the settings the plan adds: sequence length,
 * method (PEFT LoraConfig and BitsAndBytesConfig keyword arguments, ready for `LoraConfig(**cfg.model.lora)`) and
 * how the job is distributed.
 */
const HydraHardwareGroup = z.strictObject({
  model: z.strictObject({
    use_gradient_checkpointing: z.boolean(),
    name_or_path: z.string().min(1).optional(),
    dtype: z.enum(['bfloat16', 'float16', 'float32']),
    attn_implementation: z.enum(['eager', 'sdpa', 'flash_attention_2']),
    lora: z.record(z.string(), z.unknown()).optional(),
    quantization: z.record(z.string(), z.unknown()).optional(),
  }),
  training: z.strictObject({
    batch_size: z.number().int().positive(),
    num_workers: z.number().int().nonnegative(),
    block_size: z.number().int().positive(),
  }),
  device: z.strictObject({
    precision: z.enum(Precision.options),
    tf32: z.boolean(),
  }),
  optimization: z.strictObject({
    gradient_accumulation_steps: z.number().int().positive(),
    compile: z.boolean(),
    learning_rate: z.number().positive(),
    adam_betas: z.tuple([z.number(), z.number()]),
    adam_epsilon: z.number().positive(),
    weight_decay: z.number().nonnegative(),
    warmup_steps: z.number().int().nonnegative(),
    max_grad_norm: z.number().positive(),
  }),
  distributed: z.strictObject({
    strategy: z.string(),
    sharding: z.string(),
    offload: z.string(),
    devices_per_node: z.number().int().positive(),
    num_nodes: z.number().int().positive(),
  }),
})

export function hydraGroupPath(plan: TrainingPlan): string {
  return `conf/hardware/${planSlug(plan)}.yaml`
}

function precisionComment(plan: TrainingPlan): string {
  const half = halfType(plan.settings.precision)
  if (half === null) return 'float32 (no half type on this device)'
  const name = half === 'bf16' ? 'bfloat16' : 'float16 with loss scaling'
  return isPureHalf(plan.settings.precision) ? `${name}, weights kept in ${half} too` : `${name} autocast`
}

/** A nested mapping indented under its parent key. */
function block(key: string, value: unknown, indent: string): string[] {
  const body = stringify(value, { lineWidth: 0, version: '1.1' }).trimEnd().split('\n')
  return [`${indent}${key}:`, ...body.map((line) => `${indent}  ${line}`)]
}

function groupFile(plan: TrainingPlan, ctx: FormatContext): string {
  const s = plan.settings
  const name = planSlug(plan)
  const header = [
    '@package _global_',
    provenance(plan),
    `Use: python train.py hardware=${name}`,
    `Effective batch ${s.effectiveBatch} = batch_size ${s.microBatch} x accumulation ${s.gradAccum} x ${processesPerNode(s)} process(es) per node x ${s.nodes} node(s).`,
  ]
  const tf32Comment = s.tf32 ? 'TF32 for matmul' : s.device === 'cuda' ? 'TF32 off' : 'no TF32 on this device'
  const base = baseModelId(plan)
  const opt = optimizationOf(plan)
  const lora = peftAdapterConfig(plan, ctx.warn)
  const quantization = bnbQuantizationConfig(plan, engineOf(plan))
  const model = [
    'model:',
    `  use_gradient_checkpointing: ${s.gradCheckpointing}  # ${s.gradCheckpointing ? 'Recompute activations to fit memory' : 'Activations fit in memory'}`,
  ]
  if (base) model.push(`  name_or_path: ${JSON.stringify(base)}  # Base model of the fine-tune`)
  model.push(`  dtype: ${loadDtypeName(plan)}  # ${loadDtypeComment(plan)}`)
  model.push(
    `  attn_implementation: ${ATTN_IMPLEMENTATION[s.attention]}  # The attention kernel the plan prices (from_pretrained)`,
  )
  if (lora) {
    const { r, lora_alpha, lora_dropout, target_modules, fan_in_fan_out, bias, task_type } = lora
    model.push(
      ...block(
        'lora',
        { r, lora_alpha, lora_dropout, target_modules, fan_in_fan_out, bias, task_type },
        '  ',
      ),
    )
  }
  if (quantization) {
    const { quant_method: _method, ...kwargs } = quantization
    model.push(...block('quantization', kwargs, '  '))
  }
  return [
    commentLines(header, '# '),
    ...model,
    '',
    'training:',
    `  batch_size: ${s.microBatch}  # Micro-batch per GPU`,
    `  num_workers: ${s.dataloader.workers}`,
    `  block_size: ${s.seq}  # Sequence length in tokens`,
    '',
    'device:',
    `  precision: ${s.precision}  # ${precisionComment(plan)}`,
    `  tf32: ${s.tf32}  # ${tf32Comment}`,
    '',
    'optimization:',
    `  gradient_accumulation_steps: ${s.gradAccum}`,
    `  compile: ${s.compile.enabled}  # ${s.compile.enabled ? `torch.compile enabled (mode ${s.compile.mode})` : 'torch.compile off'}`,
    `  learning_rate: ${s.learningRate}  # Peak rate, cosine decay after warm-up`,
    `  adam_betas: [${opt.beta1}, ${opt.beta2}]`,
    `  adam_epsilon: ${opt.epsilon}`,
    `  weight_decay: ${opt.weightDecay}`,
    `  warmup_steps: ${opt.warmupSteps}`,
    `  max_grad_norm: ${opt.gradClip}`,
    '',
    'distributed:',
    `  strategy: ${s.strategy}`,
    `  sharding: ${s.sharding}`,
    `  offload: ${s.offload}`,
    `  devices_per_node: ${processesPerNode(s)}`,
    `  num_nodes: ${s.nodes}`,
    '',
  ].join('\n')
}

export const hydraFormat: Exporter = {
  name: 'hydra',
  description:
    'Hydra config group file conf/hardware/<name>.yaml (batch size, workers, sequence, precision, TF32, accumulation, compile, method, distribution)',
  unsupportedReason: () => null,
  render(plan, ctx) {
    return [textFile(hydraGroupPath(plan), groupFile(plan, ctx))]
  },
  validate(files, plan) {
    const path = hydraGroupPath(plan)
    const read = readStructured(files, path, 'yaml', HydraHardwareGroup)
    const problems = [...read.problems]
    const file = files.find((f) => f.path === path)
    if (file && !file.content.startsWith('# @package _global_'))
      problems.push(`${path}: missing the # @package _global_ header`)
    if (problems.length === 0) {
      const group = read.value as z.infer<typeof HydraHardwareGroup>
      if (group.training.batch_size !== plan.settings.microBatch)
        problems.push(`${path}: training.batch_size != micro-batch`)
      if (group.training.block_size !== plan.settings.seq)
        problems.push(`${path}: training.block_size != sequence ${plan.settings.seq}`)
      if (group.device.precision !== plan.settings.precision)
        problems.push(`${path}: device.precision != ${plan.settings.precision}`)
    }
    return problems
  },
}
