import { Flags } from '@oclif/core'
import { DEFAULT_STACK, type EstimateInput, parseStackRef, type StackRef } from '@rigfit/core'

/** `--stack NAME[@VERSION]`: the framework that will run the training, which decides what the settings leave open. */
export const stackFlag = {
  stack: Flags.string({
    description:
      'The framework that runs the training: hf (Transformers Trainer with PEFT, bitsandbytes, Accelerate, DeepSpeed), litgpt, torchtune, torchtitan, nemo (NeMo AutoModel) or plain (a hand-written PyTorch loop), optionally @VERSION (hf@4.40). It decides what the settings leave open: logits upcast, adapter type, compile and TF32 defaults, optimizer step, attention kernel, CUDA context. Default: hf, the current release.',
    helpValue: 'NAME[@VERSION]',
  }),
}

export interface StackChoice {
  ref: StackRef
  /** The user named it; false: the default was assumed. */
  named: boolean
}

/** The stack `--stack` names, or `fallback` (hf unless the command knows better) when it was not given. */
export function stackFromFlag(text: string | undefined, fallback: StackRef = DEFAULT_STACK): StackChoice {
  return text === undefined ? { ref: fallback, named: false } : { ref: parseStackRef(text), named: true }
}

/**
 * `rigfit estimate` flags that override single mechanisms of the stack: how the optimizer step and the loss are
 * implemented, what the CUDA context weighs, what the 4-bit layers and FSDP keep, which type the LoRA adapters train
 * in, and whether the model is compiled. Each defaults to what `--stack` does.
 */
export const stackFlags = {
  ...stackFlag,
  'frozen-stays-gathered': Flags.boolean({
    description:
      "FSDP keeps a frozen base's gathered units until the step ends, so LoRA holds a whole unsharded copy of the model (as PyTorch 2.1's FSDP under LitGPT measures). Default: the stack's (on for litgpt, whose Fabric wraps FSDP1).",
  }),
  'quant-keeps-inputs': Flags.boolean({
    description:
      "The 4-bit layers keep their inputs for backward, as bitsandbytes did before 0.43.2. Default: the stack's (on for releases that install an older bitsandbytes, such as hf@4.40).",
    dependsOn: ['quant'],
  }),
  'adapter-dtype': Flags.option({
    options: ['fp32', 'model'] as const,
    description:
      "The type LoRA adapters train in on a bf16-true or fp16-true base: fp32 as PEFT keeps them (each adapted layer casts its input to fp32 and keeps that copy), or model as LitGPT keeps them (the base's 16-bit type). Default: the stack's (fp32 for hf and plain, model for litgpt, torchtune and nemo). Autocast and fp32 runs train fp32 adapters either way.",
    dependsOn: ['lora-rank'],
  })(),
  'optimizer-impl': Flags.option({
    options: ['fused', 'foreach', 'per-tensor'] as const,
    description:
      "How the optimizer step runs: fused (one kernel), foreach (PyTorch's default, one state-sized temporary) or per-tensor (a Python loop over parameters, as Transformers' adamw_hf). Default: the stack's, or as --fused-optimizer decides.",
    exclusive: ['fused-optimizer'],
  })(),
  'cuda-context': Flags.integer({
    description:
      'MiB the CUDA context and kernels take outside the allocator. Default: by GPU generation with lazy loading (400-550 MiB); a stack of PyTorch before 2.0 (hf@4.21, plain@1.13) loads every module: 1343 MiB.',
    min: 0,
    max: 65_536,
    helpValue: 'MiB',
  }),
  compile: Flags.boolean({
    description:
      "The model runs under torch.compile: Inductor fuses element-wise ops, so fewer kernels are launched and less memory traffic moves. Default: the stack's (off for every stack: none compiles unless told to).",
    allowNo: true,
  }),
  'upcast-logits': Flags.boolean({
    allowNo: true,
    description:
      "The loss upcasts 16-bit logits to fp32 (Hugging Face's causal-LM loss), so true 16-bit runs keep fp32 copies of the logits. Default: the stack's (on for hf, plain, torchtitan, nemo and torchtune's chunks; off for litgpt); autocast and fp32 runs keep fp32 copies either way.",
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
    ...(flags['upcast-logits'] === undefined ? {} : { upcastLogits: flags['upcast-logits'] }),
  }
}
