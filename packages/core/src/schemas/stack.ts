import { z } from 'zod'

/**
 * The frameworks rigfit knows the defaults of: `hf` (Transformers' Trainer with PEFT, bitsandbytes, Accelerate and
 * DeepSpeed through it), `litgpt`, `torchtune`, `torchtitan`, `nemo` (NeMo AutoModel) and `plain` (a hand-written
 * PyTorch loop, as rigfit's example trainer and calibration harness; its version is PyTorch's).
 */
export const StackName = z.enum(['hf', 'litgpt', 'torchtune', 'torchtitan', 'nemo', 'plain'])
export type StackName = z.infer<typeof StackName>

/** A release number: one to three dot-separated integers (`4.40`, `0.4.9`, `2`). */
export const StackVersion = z.string().regex(/^\d+(\.\d+){0,2}$/, 'a release number such as 4.40 or 0.4.9')

/** The stack a run uses, written `NAME@VERSION` (`hf@4.40`); without a version the newest release rigfit knows. */
export const StackRef = z.strictObject({
  name: StackName,
  version: StackVersion,
})
export type StackRef = z.infer<typeof StackRef>

/** `NAME@VERSION`, as `--stack` takes it and validation rows state it. */
export const StackRefText = z
  .string()
  .regex(
    new RegExp(`^(${StackName.options.join('|')})@\\d+(\\.\\d+){0,2}$`),
    `NAME@VERSION with NAME one of ${StackName.options.join(', ')}, such as hf@4.40 or plain@2.11`,
  )

/** What a stack decides for the estimate: each one a mechanism `estimate()` models. */
export const StackMechanisms = z.strictObject({
  /** The loss upcasts 16-bit logits to fp32 (EstimateInput.upcastLogits). */
  upcastLogits: z.boolean(),
  /** The cross-entropy runs over this many chunks of the logits at a time (1: the whole logits at once). */
  lossChunks: z.number().int().positive(),
  /** Or chunks of this many positions of each sequence (LitGPT's lm_head_chunk_size); null: `lossChunks` decides. */
  lossChunkPositions: z.number().int().positive().nullable(),
  /** LoRA adapters on a true 16-bit base: fp32 (PEFT) or the base's type. */
  adapterDtype: z.enum(['fp32', 'model']),
  /** torch.compile unless the user turns it on or off. */
  compile: z.boolean(),
  /** TF32 matmuls unless the user says otherwise (where the GPU has TF32). */
  tf32: z.boolean(),
  /** The optimizer step's implementation unless the user names a fused optimizer. */
  optimizerImpl: z.enum(['fused', 'foreach', 'per-tensor']),
  /** bitsandbytes' 4-bit layers keep their inputs for backward (before 0.43.2). */
  quantKeepsInputs: z.boolean(),
  /** FSDP keeps a frozen base's gathered units until the step ends. */
  frozenStaysGathered: z.boolean(),
  /** CUDA modules load lazily (CUDA 11.7+ with PyTorch 2.0+); eager loading makes the context over 1 GB. */
  lazyModuleLoading: z.boolean(),
  /** The attention kernel the framework picks unless the user names one. */
  attention: z.enum(['eager', 'sdpa', 'flash']),
  /** The flash/SDPA attention kernel is FlashAttention-2's generation (EstimateInput.flashAttention2). */
  flashAttention2: z.boolean(),
  /** A quantised base's other weights (embeddings, norms, head) are cast to fp32, as prepare_model_for_kbit_training does. */
  kbitFp32Casts: z.boolean(),
  /** The model's own activation code runs (Transformers' modelling files), GPT-2's `gelu_new` op by op. */
  pythonActivations: z.boolean(),
  /** A mixture of experts runs outside autocast (Transformers 5's `@use_experts_implementation`). */
  expertsOutsideAutocast: z.boolean(),
})
export type StackMechanisms = z.infer<typeof StackMechanisms>
export type StackMechanism = keyof StackMechanisms
