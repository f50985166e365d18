import type { Attention, ModelSpec } from '@rigfit/core'

/**
 * The transformers class of one decoder (or encoder) layer per `model_type`, the unit FSDP wraps and shards on
 * its own (transformers' `_no_split_modules` of each model). The plan's memory gathers one layer's parameters at a
 * time, so an FSDP export names this class in its wrap policy.
 */
const LAYER_CLASSES: Readonly<Record<string, string>> = {
  llama: 'transformers.models.llama.modeling_llama.LlamaDecoderLayer',
  mistral: 'transformers.models.mistral.modeling_mistral.MistralDecoderLayer',
  mixtral: 'transformers.models.mixtral.modeling_mixtral.MixtralDecoderLayer',
  qwen2: 'transformers.models.qwen2.modeling_qwen2.Qwen2DecoderLayer',
  gemma: 'transformers.models.gemma.modeling_gemma.GemmaDecoderLayer',
  gemma2: 'transformers.models.gemma2.modeling_gemma2.Gemma2DecoderLayer',
  phi: 'transformers.models.phi.modeling_phi.PhiDecoderLayer',
  phi3: 'transformers.models.phi3.modeling_phi3.Phi3DecoderLayer',
  gpt2: 'transformers.models.gpt2.modeling_gpt2.GPT2Block',
  gpt_bigcode: 'transformers.models.gpt_bigcode.modeling_gpt_bigcode.GPTBigCodeBlock',
  gpt_neox: 'transformers.models.gpt_neox.modeling_gpt_neox.GPTNeoXLayer',
  bert: 'transformers.models.bert.modeling_bert.BertLayer',
}

/** The import path of the model's layer class, or null for a model type rigfit does not know. */
export function layerClassPath(model: ModelSpec): string | null {
  return LAYER_CLASSES[model.modelType] ?? null
}

/** The bare class name (`LlamaDecoderLayer`), the form transformers' `transformer_layer_cls_to_wrap` takes. */
export function layerClassName(model: ModelSpec): string | null {
  return layerClassPath(model)?.split('.').at(-1) ?? null
}

/**
 * Model types whose projections are transformers' `Conv1D` (weights stored input x output, the transpose of
 * `nn.Linear`): PEFT needs `fan_in_fan_out: true` to adapt them, or it warns and flips the flag itself only for
 * the layers it recognises.
 */
const CONV1D_TYPES = new Set(['gpt2'])

export function usesConv1D(model: ModelSpec): boolean {
  return CONV1D_TYPES.has(model.modelType)
}

/** `from_pretrained(attn_implementation=...)` for the plan's attention kernel. */
export const ATTN_IMPLEMENTATION: Readonly<Record<Attention, 'eager' | 'sdpa' | 'flash_attention_2'>> = {
  eager: 'eager',
  sdpa: 'sdpa',
  flash: 'flash_attention_2',
}
