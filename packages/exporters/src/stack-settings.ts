import { planStackMechanisms, type StackName, type TrainingPlan } from '@rigfit/core'
import type { FormatName } from './format-names.js'

/**
 * The stack each format's files run under: Transformers' Trainer for hf, accelerate and deepspeed; rigfit's example
 * trainer, a hand-written PyTorch loop, for torchrun, slurm, pytorch, rigfit, hydra and kconfig; and for lightning a
 * user's LightningModule loading the exported PEFT configs, which behaves as `plain` (PEFT's fp32 adapters, its own
 * loss), not as LitGPT (whose adapters are 16-bit).
 */
export const FORMAT_STACK: Readonly<Record<FormatName, StackName>> = {
  hf: 'hf',
  accelerate: 'hf',
  deepspeed: 'hf',
  torchrun: 'plain',
  slurm: 'plain',
  lightning: 'plain',
  hydra: 'plain',
  kconfig: 'plain',
  pytorch: 'plain',
  rigfit: 'plain',
}

/** The file every export writes beside the format's own: what the estimate assumed about the stack. */
export const STACK_SETTINGS_FILE = 'rigfit-stack.json'

/** Every setting the plan's estimate assumed that the stack or the plan decides: compile, TF32, upcast and the rest. */
export function stackSettings(plan: TrainingPlan) {
  // A plan written before plans recorded their stack was estimated with fp32 adapters and 16-bit logits.
  const m = planStackMechanisms(plan)
  return {
    stack: plan.stack ?? null,
    compile: plan.settings.compile.enabled,
    compileMode: plan.settings.compile.mode,
    tf32: plan.settings.tf32,
    fusedOptimizer: plan.settings.fusedOptimizer,
    attention: plan.settings.attention,
    upcastLogits: m?.upcastLogits ?? false,
    adapterDtype: plan.settings.lora ? (m?.adapterDtype ?? 'fp32') : null,
    lossChunks: m?.lossChunkPositions
      ? Math.ceil(plan.settings.seq / m.lossChunkPositions)
      : (m?.lossChunks ?? 1),
    note: plan.stack
      ? `The plan was estimated as ${plan.stack} runs it: keep these settings, or plan again with --stack for another framework.`
      : 'The plan predates stacks: it was estimated with fp32 adapters and 16-bit logits in the loss; plan again to record one.',
  }
}

/** One sentence for the comment header of every commented format. */
export function stackSentence(plan: TrainingPlan): string {
  const s = stackSettings(plan)
  return `Estimated for ${s.stack ? `the ${s.stack} stack` : 'no named stack'}: torch.compile ${s.compile ? `on (${s.compileMode})` : 'off'}, TF32 ${s.tf32 ? 'on' : 'off'}, the loss ${s.upcastLogits ? 'upcasts the logits to fp32' : 'keeps the logits in 16 bits'}${s.adapterDtype ? `, LoRA adapters in ${s.adapterDtype === 'fp32' ? 'fp32' : "the model's type"}` : ''} (${STACK_SETTINGS_FILE}).`
}
