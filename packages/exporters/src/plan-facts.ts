import type { Precision, TrainingPlan } from '@rigfit/core'

/** Pure half precision keeps the weights themselves in the half type, not only the compute. */
export function isPureHalf(precision: Precision): boolean {
  return precision.endsWith('-true')
}

/** Optimizer steps between checkpoints, from the plan's checkpoint interval and step time. */
export function checkpointEverySteps(plan: TrainingPlan): number {
  const stepSeconds = plan.throughput.stepSeconds
  if (stepSeconds <= 0) return Math.max(1, plan.time.steps)
  return Math.max(1, Math.ceil((plan.checkpoints.intervalMinutes * 60) / stepSeconds))
}

/** Learning-rate warm-up: 2% of the run, at most 2000 steps, at least one. */
export function warmupSteps(plan: TrainingPlan): number {
  return Math.max(1, Math.min(2000, Math.round(plan.time.steps * 0.02)))
}

/** Gradient clipping norm used by every format (the common default for transformer training). */
export const GRAD_CLIP_NORM = 1.0

export const DEFAULT_SEED = 42

/** A file-name-safe name for the plan: the GPU (or "cpu"), the GPU count and nodes, and the mode. */
export function planSlug(plan: TrainingPlan): string {
  const device = plan.hardware.gpuName ?? (plan.settings.device === 'cpu' ? 'cpu' : plan.settings.device)
  const parts = [device]
  if (plan.settings.gpus > 1) parts.push(`x${plan.settings.gpus}`)
  if (plan.settings.nodes > 1) parts.push(`${plan.settings.nodes}nodes`)
  parts.push(plan.mode)
  return parts
    .join('_')
    .toLowerCase()
    .replace(/^nvidia |^amd |^apple /, '')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
}

/** Directory where trainers write checkpoints; relative, so the export works wherever it is launched. */
export function checkpointDir(runName: string): string {
  return `checkpoints/${runName}`
}

/** AdamW hyper-parameters shared by every format that names an optimizer (GPT-style pretraining defaults). */
export const ADAM_BETAS = [0.9, 0.95] as const
export const ADAM_EPSILON = 1e-8
export const WEIGHT_DECAY = 0.1
