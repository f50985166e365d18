import type { StackFact } from './stack-table.js'

/**
 * Transformers' Trainer, with PEFT, bitsandbytes, Accelerate and DeepSpeed through it: how it runs a training step
 * by default, one fact per row (`STACK_TABLE`; later rows win).
 */
export const HF_STACK_FACTS: readonly StackFact[] = [
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
  {
    stack: 'hf',
    set: { pythonActivations: true },
    source: 'https://github.com/huggingface/transformers/blob/main/src/transformers/activations.py',
    says: "NewGELUActivation (GPT-2's and Phi's gelu_new): 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0)))), eight ops that keep four tensors for backward",
  },
  {
    stack: 'hf',
    before: '5.17',
    set: { expertsOutsideAutocast: false },
    source:
      'https://github.com/huggingface/transformers/blob/v4.57.0/src/transformers/models/mixtral/modeling_mixtral.py',
    says: "Transformers 4's Mixtral runs each expert as nn.Linear modules (MixtralBlockSparseTop2MLP), which autocast casts to the half type; rigfit has measured experts outside autocast from 5.17 only",
  },
  {
    stack: 'hf',
    from: '5.17',
    set: { expertsOutsideAutocast: true },
    source: 'https://github.com/huggingface/transformers/blob/main/src/transformers/integrations/moe.py',
    says: 'MixtralExperts (@use_experts_implementation) keeps 3D expert weights, and "torch.nn.functional.grouped_mm and torch._grouped_mm are not autocast-enabled": on an H200 with Transformers 5.17.0 (examples/calibrate/hf_step_profile.py) a full bf16-autocast step\'s costliest kernels are fp32 GEMMs',
  },
]
