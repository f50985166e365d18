import { Flags } from '@oclif/core'
import type { EstimateInput } from '@rigfit/core'

/**
 * `rigfit estimate` flags that describe the software stack a run uses rather than its settings: how the optimizer
 * step and the loss are implemented, what the CUDA context weighs, what the 4-bit layers and FSDP keep, which
 * type the LoRA adapters train in, and whether the model is compiled. Each defaults to the current stack; validation rows set them only where their
 * source states the stack.
 */
export const stackFlags = {
  'frozen-stays-gathered': Flags.boolean({
    description:
      "FSDP keeps a frozen base's gathered units until the step ends, so LoRA holds a whole unsharded copy of the model (as PyTorch 2.1's FSDP under LitGPT measures). Default: off (units reshard after their backward).",
  }),
  'quant-keeps-inputs': Flags.boolean({
    description:
      'The 4-bit layers keep their inputs for backward, as bitsandbytes did before 0.43.2. Default: off (current bitsandbytes keeps only the packed weight).',
    dependsOn: ['quant'],
  }),
  'adapter-dtype': Flags.option({
    options: ['fp32', 'model'] as const,
    description:
      "The type LoRA adapters train in on a bf16-true or fp16-true base: fp32 as PEFT keeps them (each adapted layer casts its input to fp32 and keeps that copy), or model as LitGPT keeps them (the base's 16-bit type). Default: fp32 (PEFT, which every rigfit export uses). Autocast and fp32 runs train fp32 adapters either way.",
    dependsOn: ['lora-rank'],
  })(),
  'optimizer-impl': Flags.option({
    options: ['fused', 'foreach', 'per-tensor'] as const,
    description:
      "How the optimizer step runs: fused (one kernel), foreach (PyTorch's default, one state-sized temporary) or per-tensor (a Python loop over parameters, as Transformers' adamw_hf). Default: as --fused-optimizer decides.",
    exclusive: ['fused-optimizer'],
  })(),
  'cuda-context': Flags.integer({
    description:
      'MiB the CUDA context and kernels take outside the allocator. Default: by GPU generation with lazy loading (400-550 MiB); stacks older than CUDA 11.7 take over 1 GB.',
    min: 0,
    max: 65_536,
    helpValue: 'MiB',
  }),
  compile: Flags.boolean({
    description:
      'The model runs under torch.compile: Inductor fuses element-wise ops, so fewer kernels are launched and less memory traffic moves. Default: what `rigfit plan` chooses for the device (on with CUDA and ROCm).',
    allowNo: true,
  }),
  'upcast-logits': Flags.boolean({
    description:
      "The loss upcasts 16-bit logits to fp32 (Hugging Face's causal-LM loss), so true 16-bit runs keep fp32 copies of the logits. Default: off (the loss takes the logits' own type, as LitGPT's does); autocast and fp32 runs keep fp32 copies either way.",
  }),
}

interface StackFlagValues {
  'adapter-dtype'?: EstimateInput['adapterDtype'] | undefined
  'optimizer-impl'?: EstimateInput['optimizerImpl'] | undefined
  'quant-keeps-inputs'?: boolean | undefined
  'frozen-stays-gathered'?: boolean | undefined
  'cuda-context'?: number | undefined
  'upcast-logits'?: boolean | undefined
}

/** The estimator inputs the stack flags that were given override. */
export function stackInput(flags: StackFlagValues): Partial<EstimateInput> {
  return {
    ...(flags['adapter-dtype'] ? { adapterDtype: flags['adapter-dtype'] } : {}),
    ...(flags['optimizer-impl'] ? { optimizerImpl: flags['optimizer-impl'] } : {}),
    ...(flags['quant-keeps-inputs'] ? { quantKeepsInputs: true } : {}),
    ...(flags['frozen-stays-gathered'] ? { frozenStaysGathered: true } : {}),
    ...(flags['cuda-context'] === undefined ? {} : { cudaContextBytes: flags['cuda-context'] * 2 ** 20 }),
    ...(flags['upcast-logits'] ? { upcastLogits: true } : {}),
  }
}
