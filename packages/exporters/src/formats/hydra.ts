import type { TrainingPlan } from '@rigfit/core'
import { z } from 'zod'
import { halfType, isPureHalf, planSlug, processesPerNode } from '../plan-facts.js'
import { commentLines, provenance, textFile } from '../render.js'
import type { Exporter } from '../types.js'
import { parseYaml11, validateStructured } from '../validate.js'

/** The group file shape of the hardware configs this format targets (conf/hardware/gpu_4090.yaml). */
const HydraHardwareGroup = z.strictObject({
  model: z.strictObject({ use_gradient_checkpointing: z.boolean() }),
  training: z.strictObject({
    batch_size: z.number().int().positive(),
    num_workers: z.number().int().nonnegative(),
  }),
  device: z.strictObject({ mixed_precision: z.boolean(), tf32: z.boolean() }),
  optimization: z.strictObject({
    gradient_accumulation_steps: z.number().int().positive(),
    compile: z.boolean(),
  }),
})

export function hydraGroupPath(plan: TrainingPlan): string {
  return `conf/hardware/${planSlug(plan)}.yaml`
}

function precisionComment(plan: TrainingPlan): string {
  const half = halfType(plan.settings.precision)
  if (half === null) return 'float32 (no half type on this device)'
  const name = half === 'bf16' ? 'bfloat16' : 'float16 with loss scaling'
  return isPureHalf(plan.settings.precision) ? `${name}, weights kept in ${half} too` : name
}

function groupFile(plan: TrainingPlan): string {
  const s = plan.settings
  const name = planSlug(plan)
  const header = [
    '@package _global_',
    provenance(plan),
    `Use: python train.py hardware=${name}`,
    `Effective batch ${s.effectiveBatch} = batch_size ${s.microBatch} x accumulation ${s.gradAccum} x ${processesPerNode(s)} GPU(s) x ${s.nodes} node(s).`,
  ]
  const tf32Comment = s.tf32
    ? 'TF32 for matmul'
    : plan.settings.device === 'cuda'
      ? 'TF32 off'
      : 'no TF32 on this device'
  return [
    commentLines(header, '# '),
    'model:',
    `  use_gradient_checkpointing: ${s.gradCheckpointing}  # ${s.gradCheckpointing ? 'Recompute activations to fit memory' : 'Activations fit in memory'}`,
    '',
    'training:',
    `  batch_size: ${s.microBatch}  # Micro-batch per GPU`,
    `  num_workers: ${s.dataloader.workers}`,
    '',
    'device:',
    `  mixed_precision: ${halfType(s.precision) !== null}  # ${precisionComment(plan)}`,
    `  tf32: ${s.tf32}  # ${tf32Comment}`,
    '',
    'optimization:',
    `  gradient_accumulation_steps: ${s.gradAccum}`,
    `  compile: ${s.compile.enabled}  # ${s.compile.enabled ? `torch.compile enabled (mode ${s.compile.mode})` : 'torch.compile off'}`,
    '',
  ].join('\n')
}

export const hydraFormat: Exporter = {
  name: 'hydra',
  description:
    'Hydra config group file conf/hardware/<name>.yaml (batch size, workers, precision, TF32, accumulation, compile)',
  unsupportedReason: () => null,
  render(plan, ctx) {
    if (halfType(plan.settings.precision) === 'fp16') {
      ctx.warn(
        'hydra-fp16',
        'device.mixed_precision is a switch; the trainer must pick float16 (not bfloat16) on this GPU.',
      )
    }
    return [textFile(hydraGroupPath(plan), groupFile(plan))]
  },
  validate(files, plan) {
    const path = hydraGroupPath(plan)
    const problems = validateStructured(files, path, 'yaml', HydraHardwareGroup)
    const file = files.find((f) => f.path === path)
    if (file && !file.content.startsWith('# @package _global_'))
      problems.push(`${path}: missing the # @package _global_ header`)
    if (problems.length === 0) {
      const group = parseYaml11(file?.content ?? '') as z.infer<typeof HydraHardwareGroup>
      if (group.training.batch_size !== plan.settings.microBatch)
        problems.push(`${path}: training.batch_size != micro-batch`)
    }
    return problems
  },
}
