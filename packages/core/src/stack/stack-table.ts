import type { StackMechanisms, StackName } from '../schemas/stack.js'

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
  hf: '5.13',
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
  {
    stack: 'hf',
    set: { upcastLogits: true, lossChunks: 1, lossChunkPositions: null },
    source: 'https://github.com/huggingface/transformers/blob/main/src/transformers/loss/loss_utils.py',
    says: 'ForCausalLMLoss: "Upcast to float if we need to compute the loss to avoid potential precision issues", logits.float() over the whole logits',
  },
  {
    stack: 'hf',
    set: { compile: false },
    source:
      'https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments.torch_compile',
    says: 'TrainingArguments.torch_compile defaults to False',
  },
  {
    stack: 'hf',
    set: { tf32: false },
    source:
      'https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments.tf32',
    says: "TrainingArguments.tf32 defaults to None: PyTorch's own default, allow_tf32 off since PyTorch 1.12",
  },
  {
    stack: 'hf',
    before: '4.20',
    set: { tf32: true },
    source: 'https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices',
    says: 'PyTorch 1.7-1.11 (contemporary with Transformers before 4.20) had torch.backends.cuda.matmul.allow_tf32 on',
  },
  {
    stack: 'hf',
    before: '4.32',
    set: { optimizerImpl: 'per-tensor' },
    source: 'https://github.com/huggingface/transformers/pull/25109',
    says: 'the default optim was adamw_hf, a Python loop over parameters, until it became adamw_torch',
  },
  {
    stack: 'hf',
    from: '4.32',
    set: { optimizerImpl: 'foreach' },
    source: 'https://github.com/huggingface/transformers/pull/25109',
    says: "optim defaults to adamw_torch: torch.optim.AdamW, PyTorch's foreach step on CUDA",
  },
  {
    stack: 'hf',
    from: '4.54',
    set: { optimizerImpl: 'fused' },
    source: 'https://github.com/huggingface/transformers/pull/37358',
    says: 'optim defaults to adamw_torch_fused with PyTorch 2.8 and later',
  },
  {
    stack: 'hf',
    before: '4.36',
    set: { attention: 'eager' },
    source: 'https://github.com/huggingface/transformers/releases/tag/v4.36.0',
    says: 'models ran eager attention until 4.36 made torch SDPA the default attn_implementation',
  },
  {
    stack: 'hf',
    from: '4.36',
    set: { attention: 'sdpa' },
    source: 'https://github.com/huggingface/transformers/releases/tag/v4.36.0',
    says: 'torch.nn.functional.scaled_dot_product_attention is the default attn_implementation where a model supports it',
  },
  {
    stack: 'hf',
    before: '4.43',
    set: { adapterDtype: 'model', quantKeepsInputs: true },
    source: 'https://github.com/bitsandbytes-foundation/bitsandbytes/pull/1270',
    says: "PEFT before 0.12 moved LoRA weights to the base layer's dtype; bitsandbytes before 0.43.2 (July 2024) kept each 4-bit layer's input for backward",
  },
  {
    stack: 'hf',
    from: '4.43',
    set: { adapterDtype: 'fp32', quantKeepsInputs: false },
    source:
      'https://huggingface.co/docs/peft/package_reference/peft_model#peft.get_peft_model.autocast_adapter_dtype',
    says: 'PEFT 0.12+ get_peft_model(autocast_adapter_dtype=True) upcasts bf16/fp16 adapter weights to fp32; bitsandbytes 0.43.2+ keeps only the packed weight',
  },
  {
    stack: 'hf',
    set: { kbitFp32Casts: true },
    source: 'https://github.com/huggingface/peft/blob/main/src/peft/utils/other.py',
    says: "prepare_model_for_kbit_training (called by TRL's SFTTrainer and PEFT's QLoRA examples) casts every non-quantised fp16/bf16 parameter to fp32",
  },
  {
    stack: 'hf',
    set: { frozenStaysGathered: false },
    source: 'https://huggingface.co/docs/peft/accelerate/fsdp',
    says: "Accelerate's FSDP with PEFT reshards each unit after its backward (use_orig_params, FULL_SHARD)",
  },
  {
    stack: 'hf',
    before: '4.28',
    set: { lazyModuleLoading: false },
    source: 'https://huggingface.co/docs/transformers/v4.21.0/perf_train_gpu_one',
    says: 'PyTorch before 2.0 (contemporary with Transformers before 4.28) loads every CUDA module: the page measures 1343 MB for the context and kernels',
  },
  {
    stack: 'hf',
    from: '4.28',
    set: { lazyModuleLoading: true },
    source: 'https://github.com/pytorch/pytorch/pull/85692',
    says: 'PyTorch 2.0 sets CUDA_MODULE_LOADING=LAZY unless the user sets it',
  },
  {
    stack: 'hf',
    before: '4.38',
    set: { flashAttention2: false },
    source: 'https://pytorch.org/blog/pytorch2-2/',
    says: 'PyTorch 2.2 (January 2024, contemporary with Transformers 4.38) brought FlashAttention-v2 into scaled_dot_product_attention; earlier releases ran the first generation',
  },
  {
    stack: 'hf',
    from: '4.38',
    set: { flashAttention2: true },
    source: 'https://pytorch.org/blog/pytorch2-2/',
    says: 'scaled_dot_product_attention runs FlashAttention-2 from PyTorch 2.2; attn_implementation="flash_attention_2" runs flash-attn 2',
  },

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
]
