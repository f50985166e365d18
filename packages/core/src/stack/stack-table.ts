import type { StackMechanisms, StackName } from '../schemas/stack.js'
import { HF_STACK_FACTS } from './stack-facts-hf.js'

/**
 * One fact about a stack: the mechanisms it sets for the releases in [from, before), and where that is written.
 * Versions are the stack's own releases (Transformers for `hf`, PyTorch for `plain`); where a fact belongs to a
 * library beside it (PEFT, bitsandbytes, PyTorch), the range is the stack releases contemporary with that
 * library's change, as a fresh install of that release pulls it.
 */
export interface StackFact {
  stack: StackName
  from?: string
  before?: string
  set: Partial<StackMechanisms>
  /** Where the default is written: a file, a release note or a documentation page. */
  source: string
  /** What the source says, in a few words. */
  says: string
}

/** The newest release of each stack this table describes: what `--stack NAME` without a version means. */
export const CURRENT_STACK_VERSION: Readonly<Record<StackName, string>> = {
  hf: '5.17',
  litgpt: '0.5',
  torchtune: '0.6',
  torchtitan: '0.2',
  nemo: '0.2',
  plain: '2.13',
}

/** The stack `rigfit estimate` and `rigfit plan` assume when none is named: Transformers' Trainer, which most fine-tunes use. */
export const DEFAULT_STACK = { name: 'hf', version: CURRENT_STACK_VERSION.hf } as const

/** How each stack runs a training step by default, one fact per row; later rows win within a stack. */
export const STACK_TABLE: readonly StackFact[] = [
  // Transformers' Trainer, with PEFT, bitsandbytes, Accelerate and DeepSpeed through it.
  ...HF_STACK_FACTS,
  // LitGPT (Lightning Fabric).
  {
    stack: 'litgpt',
    set: { upcastLogits: false, lossChunks: 1, lossChunkPositions: 128 },
    source: 'https://github.com/Lightning-AI/litgpt/blob/main/litgpt/utils.py',
    says: 'chunked_cross_entropy takes the logits in their own dtype, one lm_head_chunk_size=128 chunk of positions at a time',
  },
  {
    stack: 'litgpt',
    set: { adapterDtype: 'model' },
    source: 'https://github.com/Lightning-AI/litgpt/blob/main/litgpt/lora.py',
    says: "LoRALinear's lora_A/lora_B are created with the model under fabric.init_module, in the training precision's dtype",
  },
  {
    stack: 'litgpt',
    set: { compile: false, tf32: true, optimizerImpl: 'foreach', attention: 'sdpa' },
    source: 'https://github.com/Lightning-AI/litgpt/blob/main/litgpt/finetune/lora.py',
    says: 'no torch.compile in finetune; torch.set_float32_matmul_precision("high"); torch.optim.AdamW; CausalSelfAttention calls scaled_dot_product_attention',
  },
  {
    stack: 'litgpt',
    set: { kbitFp32Casts: false },
    source: 'https://github.com/Lightning-AI/litgpt/blob/main/litgpt/finetune/lora.py',
    says: "--quantize bnb.nf4 goes through Fabric's BitsandbytesPrecision, which leaves the other weights in the training dtype",
  },
  {
    stack: 'litgpt',
    set: { frozenStaysGathered: true },
    source: 'https://github.com/pytorch/pytorch/issues/95805',
    says: "Fabric's FSDPStrategy wraps FSDP1, which keeps a frozen unit's gathered parameters after its backward",
  },
  {
    stack: 'litgpt',
    before: '0.5',
    set: { quantKeepsInputs: true },
    source: 'https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1270',
    says: 'releases before 0.5 install bitsandbytes before 0.43.2, whose 4-bit layers keep their input for backward',
  },
  {
    stack: 'litgpt',
    from: '0.5',
    set: { quantKeepsInputs: false },
    source: 'https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1270',
    says: 'bitsandbytes 0.43.2+ keeps only the packed weight',
  },
  {
    stack: 'litgpt',
    set: { lazyModuleLoading: true },
    source: 'https://github.com/pytorch/pytorch/pull/85692',
    says: 'every LitGPT release needs PyTorch 2.1 or later, which loads CUDA modules lazily',
  },
  {
    stack: 'litgpt',
    set: { flashAttention2: true },
    source: 'https://github.com/Lightning-AI/litgpt/blob/main/pyproject.toml',
    says: 'dependencies: "torch>=2.6", whose scaled_dot_product_attention carries FlashAttention-v2 (since 2.2)',
  },
  {
    stack: 'litgpt',
    before: '0.2',
    set: { flashAttention2: false },
    source: 'https://github.com/Lightning-AI/litgpt/blob/main/tutorials/resource-tables.md',
    says: 'the first releases ran on PyTorch 2.1 (the resource tables name 2.1.0+cu121), before FlashAttention-v2 reached scaled_dot_product_attention',
  },
  {
    stack: 'litgpt',
    set: { pythonActivations: false },
    source: 'https://github.com/Lightning-AI/litgpt/blob/main/litgpt/model.py',
    says: 'GptNeoxMLP: torch.nn.functional.gelu(x, approximate=self.config.gelu_approximate), one kernel',
  },
  {
    stack: 'litgpt',
    set: { expertsOutsideAutocast: false },
    source: 'https://github.com/Lightning-AI/litgpt/blob/main/litgpt/model.py',
    says: "LLaMAMoE runs each expert as an LLaMAMLP of nn.Linear layers, which Fabric's autocast casts like every other layer",
  },

  // torchtune.
  {
    stack: 'torchtune',
    set: { upcastLogits: true, lossChunks: 8, lossChunkPositions: null },
    source: 'https://github.com/pytorch/torchtune/blob/main/torchtune/modules/loss/ce_chunked_output_loss.py',
    says: 'CEWithChunkedOutputLoss(num_output_chunks=8) upcasts one chunk of logits to fp32 at a time',
  },
  {
    stack: 'torchtune',
    set: { compile: false, optimizerImpl: 'fused' },
    source:
      'https://github.com/pytorch/torchtune/blob/main/recipes/configs/llama3_1/8B_lora_single_device.yaml',
    says: 'compile: False; optimizer torch.optim.AdamW with fused: True',
  },
  {
    stack: 'torchtune',
    set: {
      adapterDtype: 'model',
      tf32: false,
      attention: 'sdpa',
      kbitFp32Casts: false,
      quantKeepsInputs: false,
    },
    source: 'https://github.com/pytorch/torchtune/blob/main/recipes/lora_finetune_single_device.py',
    says: "the model, adapters included, is built under set_default_dtype(bf16); no TF32 switch; attention through scaled_dot_product_attention; QLoRA through torchao's NF4 tensors, not bitsandbytes",
  },
  {
    stack: 'torchtune',
    set: { frozenStaysGathered: false, lazyModuleLoading: true },
    source: 'https://github.com/pytorch/torchtune/blob/main/recipes/lora_finetune_distributed.py',
    says: 'shards with FSDP2 (fully_shard), which reshards every unit after its backward; needs PyTorch 2.4+',
  },
  {
    stack: 'torchtune',
    set: { flashAttention2: true },
    source: 'https://pytorch.org/blog/pytorch2-2/',
    says: 'torchtune needs PyTorch 2.2 or later, whose scaled_dot_product_attention carries FlashAttention-v2',
  },
  {
    stack: 'torchtune',
    set: { pythonActivations: false },
    source: 'https://github.com/pytorch/torchtune/blob/main/torchtune/modules/feed_forward.py',
    says: "FeedForward applies a torch.nn activation module (SiLU, or GELU with approximate='tanh'), one kernel",
  },
  {
    stack: 'torchtune',
    set: { expertsOutsideAutocast: false },
    source:
      'https://github.com/pytorch/torchtune/blob/main/recipes/configs/llama3_1/8B_full_single_device.yaml',
    says: 'recipes train with dtype: bf16 and no autocast, so every weight, experts included, multiplies in bf16',
  },

  // torchtitan.
  {
    stack: 'torchtitan',
    set: { upcastLogits: true, lossChunks: 1, lossChunkPositions: null },
    source: 'https://github.com/pytorch/torchtitan/blob/main/torchtitan/components/loss.py',
    says: 'cross_entropy_loss computes the loss on pred.flatten(0, 1).float()',
  },
  {
    stack: 'torchtitan',
    set: { compile: false, optimizerImpl: 'fused', tf32: false },
    source: 'https://github.com/pytorch/torchtitan/blob/main/torchtitan/config/job_config.py',
    says: 'compile is off unless enabled; the optimizer implementation defaults to "fused"; no TF32 switch',
  },
  {
    stack: 'torchtitan',
    set: {
      attention: 'sdpa',
      frozenStaysGathered: false,
      lazyModuleLoading: true,
      adapterDtype: 'model',
      kbitFp32Casts: false,
      quantKeepsInputs: false,
    },
    source: 'https://github.com/pytorch/torchtitan/blob/main/docs/fsdp.md',
    says: 'FSDP2 with bf16 parameters, scaled_dot_product_attention; no LoRA or bitsandbytes path (adapters, were any added, in the model type)',
  },
  {
    stack: 'torchtitan',
    set: { flashAttention2: true },
    source: 'https://pytorch.org/blog/pytorch2-2/',
    says: 'torchtitan runs on PyTorch nightlies after 2.2, whose scaled_dot_product_attention carries FlashAttention-v2',
  },
  {
    stack: 'torchtitan',
    set: { pythonActivations: false },
    source: 'https://github.com/pytorch/torchtitan/blob/main/torchtitan/models/llama3/model/model.py',
    says: 'FeedForward: self.w2(F.silu(self.w1(x)) * self.w3(x)); no Python GELU',
  },
  {
    stack: 'torchtitan',
    set: { expertsOutsideAutocast: false },
    source: 'https://github.com/pytorch/torchtitan/blob/main/docs/fsdp.md',
    says: "FSDP2 with bf16 parameters and no autocast: experts multiply in the parameters' bf16 like every layer",
  },

  // NeMo AutoModel.
  {
    stack: 'nemo',
    set: { upcastLogits: true, lossChunks: 1, lossChunkPositions: null },
    source: 'https://github.com/NVIDIA-NeMo/Automodel/blob/main/nemo_automodel/components/loss/masked_ce.py',
    says: 'MaskedCrossEntropy(fp32_upcast=True) casts the logits to fp32 before the loss',
  },
  {
    stack: 'nemo',
    set: { adapterDtype: 'model' },
    source: 'https://github.com/NVIDIA-NeMo/Automodel/blob/main/nemo_automodel/components/_peft/lora.py',
    says: "LinearLoRA creates lora_A/lora_B in the base weight's dtype unless lora_dtype is set",
  },
  {
    stack: 'nemo',
    set: {
      compile: false,
      tf32: false,
      optimizerImpl: 'foreach',
      attention: 'sdpa',
      frozenStaysGathered: false,
      lazyModuleLoading: true,
      kbitFp32Casts: false,
      quantKeepsInputs: false,
    },
    source:
      'https://github.com/NVIDIA-NeMo/Automodel/blob/main/examples/llm_finetune/llama3_2/llama3_2_1b_hellaswag_peft.yaml',
    says: 'compile disabled unless configured; torch.optim.Adam (foreach on CUDA); Transformers models with SDPA; FSDP2 sharding',
  },
  {
    stack: 'nemo',
    set: { flashAttention2: true },
    source: 'https://pytorch.org/blog/pytorch2-2/',
    says: 'NeMo AutoModel runs on PyTorch 2.2 and later, whose scaled_dot_product_attention carries FlashAttention-v2',
  },
  {
    stack: 'nemo',
    set: { pythonActivations: true },
    source: 'https://github.com/NVIDIA-NeMo/Automodel/blob/main/nemo_automodel/_transformers/auto_model.py',
    says: "NeMoAutoModelForCausalLM builds Transformers' model classes, whose modelling code (and activations.py) runs",
  },
  {
    stack: 'nemo',
    set: { expertsOutsideAutocast: false },
    source: 'examples/calibrate/hf_step_profile.py in this repository',
    says: "rigfit has measured no NeMo AutoModel mixture of experts; its experts are priced at the step's precision",
  },

  // A hand-written PyTorch loop (rigfit's example trainer and calibration harness); versions are PyTorch's.
  {
    stack: 'plain',
    set: {
      upcastLogits: true,
      lossChunks: 1,
      lossChunkPositions: null,
      adapterDtype: 'fp32',
      kbitFp32Casts: false,
    },
    source: 'examples/pytorch/rigfit_model.py and examples/calibrate/decoder.py in this repository',
    says: "the example's loss is F.cross_entropy(logits.float(), ...); its adapters come from PEFT's get_peft_model (fp32 on a 16-bit base)",
  },
  {
    stack: 'plain',
    set: { compile: false, attention: 'sdpa', frozenStaysGathered: false, quantKeepsInputs: false },
    source: 'https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html',
    says: 'a loop compiles nothing unless it calls torch.compile; models call scaled_dot_product_attention',
  },
  {
    stack: 'plain',
    set: { tf32: false },
    source: 'https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices',
    says: 'torch.backends.cuda.matmul.allow_tf32 is False by default since PyTorch 1.12',
  },
  {
    stack: 'plain',
    before: '1.12',
    set: { tf32: true },
    source: 'https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices',
    says: 'PyTorch 1.7-1.11 allowed TF32 matmuls by default',
  },
  {
    stack: 'plain',
    before: '2.0',
    set: { optimizerImpl: 'per-tensor', lazyModuleLoading: false, attention: 'eager' },
    source: 'https://github.com/pytorch/pytorch/pull/85692',
    says: 'before 2.0 optimizers loop over tensors unless foreach=True, CUDA modules load eagerly, and there is no scaled_dot_product_attention',
  },
  {
    stack: 'plain',
    from: '2.0',
    set: { optimizerImpl: 'foreach', lazyModuleLoading: true },
    source: 'https://pytorch.org/docs/stable/generated/torch.optim.AdamW.html',
    says: 'foreach defaults to the multi-tensor step on CUDA; CUDA_MODULE_LOADING=LAZY is set by default',
  },
  {
    stack: 'plain',
    before: '2.2',
    set: { flashAttention2: false },
    source: 'https://pytorch.org/blog/pytorch2-2/',
    says: 'scaled_dot_product_attention ran the first FlashAttention generation until PyTorch 2.2',
  },
  {
    stack: 'plain',
    from: '2.2',
    set: { flashAttention2: true },
    source: 'https://pytorch.org/blog/pytorch2-2/',
    says: 'from PyTorch 2.2, scaled_dot_product_attention runs FlashAttention-2 (about twice the speed of the earlier kernels)',
  },
  {
    stack: 'plain',
    set: { pythonActivations: false },
    source: 'https://pytorch.org/docs/stable/generated/torch.nn.functional.gelu.html',
    says: "a hand-written model calls F.gelu (approximate='tanh' for GPT-2's layout), one kernel",
  },
  {
    stack: 'plain',
    set: { expertsOutsideAutocast: false },
    source: 'https://pytorch.org/docs/stable/amp.html#cuda-ops-that-can-autocast-to-float16',
    says: "a hand-written loop's experts are nn.Linear layers or matmuls, which autocast runs in the half type",
  },
]
