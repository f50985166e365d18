import { type Optimization, type Precision, planOptimization, type TrainingPlan } from '@rigfit/core'

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

/**
 * The plan's optimizer settings (betas, epsilon, weight decay, warm-up, clipping), chosen in core by method and
 * origin; every format writes these, never constants of its own.
 */
export function optimizationOf(plan: TrainingPlan): Optimization {
  return planOptimization(plan)
}

/** The optimizer line a format states in a comment: `AdamW lr=0.0002 betas=(0.9, 0.999) eps=1e-8 ...`. */
export function optimizerSummary(plan: TrainingPlan): string {
  const o = optimizationOf(plan)
  return `${plan.settings.optimizer} lr=${plan.settings.learningRate} betas=(${o.beta1}, ${o.beta2}) eps=${o.epsilon} weight_decay=${o.weightDecay} warmup_steps=${o.warmupSteps} max_grad_norm=${o.gradClip}`
}

/** Learning-rate warm-up steps, as the plan states them. */
export function warmupSteps(plan: TrainingPlan): number {
  return optimizationOf(plan).warmupSteps
}

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
