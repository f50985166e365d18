import type { Optimization, TrainingPlan } from '../schemas/training-plan.js'
import type { Workload } from '../schemas/workload.js'

type Origin = 'pretrain' | 'full-finetune' | 'adapters'

/**
 * What each kind of run trains with, besides its learning rate (learning-rate.ts):
 * - pretraining: AdamW betas 0.9/0.95, weight decay 0.1, clipping at 1.0 (GPT-3 paper, appendix B; Llama 2, section
 *   2.2; DeepSeek LLM, section 2.3), warm-up 2% of the run up to DeepSeek LLM's 2000 steps;
 * - full fine-tuning: transformers' AdamW betas 0.9/0.999, no weight decay and 3% warm-up (the Alpaca and Tulu 2
 *   instruction-tuning recipes), clipping at 1.0;
 * - LoRA and QLoRA: betas 0.9/0.999, no weight decay (the adapters' dropout regularises instead), 3% warm-up and
 *   clipping at 0.3 (QLoRA, Dettmers et al. 2023, appendix; the qlora.py defaults of artidoro/qlora: "tuned and works
 *   well for all models tested").
 */
const BY_ORIGIN: Record<Origin, { base: Omit<Optimization, 'warmupSteps'>; warmup: number; why: string }> = {
  pretrain: {
    base: { beta1: 0.9, beta2: 0.95, epsilon: 1e-8, weightDecay: 0.1, gradClip: 1 },
    warmup: 0.02,
    why: 'pretraining AdamW: betas 0.9/0.95, weight decay 0.1, clipping 1.0 (GPT-3, Llama 2, DeepSeek LLM), warm-up 2% of the steps up to 2000',
  },
  'full-finetune': {
    base: { beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, gradClip: 1 },
    warmup: 0.03,
    why: "full fine-tuning: transformers' AdamW betas 0.9/0.999, no weight decay, 3% warm-up (Alpaca, Tulu 2), clipping 1.0",
  },
  adapters: {
    base: { beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, gradClip: 0.3 },
    warmup: 0.03,
    why: 'LoRA/QLoRA: betas 0.9/0.999, no weight decay, 3% warm-up, clipping 0.3 (QLoRA paper and its qlora.py defaults)',
  },
}

/** Warm-up steps are capped here (DeepSeek LLM warms up for 2000 steps). */
const MAX_WARMUP_STEPS = 2000

export function originOf(kind: Workload['kind'], method: 'full' | 'lora' | 'qlora'): Origin {
  if (method !== 'full') return 'adapters'
  return kind === 'pretrain' ? 'pretrain' : 'full-finetune'
}

/** The optimizer settings for a run of `steps` optimizer steps, with the reason and its sources. */
export function optimizationFor(
  kind: Workload['kind'],
  method: 'full' | 'lora' | 'qlora',
  steps: number,
): { value: Optimization; reason: string } {
  const { base, warmup, why } = BY_ORIGIN[originOf(kind, method)]
  const warmupSteps = Math.max(1, Math.min(MAX_WARMUP_STEPS, Math.round(steps * warmup)))
  return { value: { ...base, warmupSteps }, reason: why }
}

/**
 * A plan's optimizer settings: its own, or, for a plan written before they were planned, what rigfit exported
 * then (pretraining AdamW for every run).
 */
export function planOptimization(plan: TrainingPlan): Optimization {
  if (plan.settings.optimization) return plan.settings.optimization
  return optimizationFor('pretrain', 'full', plan.time.steps).value
}
