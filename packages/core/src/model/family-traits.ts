import { deepFreeze } from '../deep-freeze.js'
import type { ModelSpec } from '../schemas/model-spec.js'

// The architecture conventions of each Hugging Face `model_type`, in one place: the config.json reader fills in
// what a config leaves out from here, and the model catalog takes its models' architecture from here.

/** What a `model_type` implies that its config.json does not spell out. */
export interface TypeTraits {
  kind: ModelSpec['kind']
  mlp: ModelSpec['mlp']
  norm: ModelSpec['norm']
  positions: ModelSpec['positions']
  bias: ModelSpec['bias']
  /** `tie_word_embeddings` when the config omits it (the model class's default). */
  tied: boolean
  /** MLP width when the config omits it, as a multiple of the hidden size. */
  ffnRatio?: number
  /** The activation's code when the config names none (`activationOf`); one fused kernel when absent. */
  activation?: ModelSpec['activation']
}

const gptLike: TypeTraits = {
  kind: 'decoder',
  mlp: 'gelu',
  norm: 'layernorm',
  positions: 'learned',
  bias: 'all',
  tied: true,
  ffnRatio: 4,
}
const llamaLike: TypeTraits = {
  kind: 'decoder',
  mlp: 'swiglu',
  norm: 'rmsnorm',
  positions: 'rope',
  bias: 'none',
  tied: false,
}

export const MODEL_TYPE_TRAITS: Readonly<Record<string, TypeTraits>> = deepFreeze<Record<string, TypeTraits>>(
  {
    gpt2: { ...gptLike, activation: 'gelu-new' },
    gpt_bigcode: gptLike,
    opt: { ...gptLike, tied: true },
    gpt_neox: { ...gptLike, positions: 'rope', tied: false },
    phi: { ...gptLike, positions: 'rope', tied: false, activation: 'gelu-new' },
    falcon: { ...gptLike, positions: 'rope', bias: 'none', tied: true },
    mpt: { ...gptLike, bias: 'none' },
    stablelm: { ...llamaLike, norm: 'layernorm' },
    starcoder2: { ...gptLike, positions: 'rope', tied: true },
    llama: llamaLike,
    mistral: llamaLike,
    mixtral: llamaLike,
    olmo: { ...llamaLike, norm: 'layernorm' },
    olmo2: llamaLike,
    phi3: llamaLike,
    qwen2: { ...llamaLike, bias: 'qkv' },
    qwen3: llamaLike,
    gemma: { ...llamaLike, mlp: 'geglu', tied: true },
    gemma2: { ...llamaLike, mlp: 'geglu', tied: true },
    gemma3_text: { ...llamaLike, mlp: 'geglu', tied: true },
    bert: { ...gptLike, kind: 'encoder', tied: true, ffnRatio: undefined },
    roberta: { ...gptLike, kind: 'encoder', tied: true, ffnRatio: undefined },
  },
)

/**
 * How Transformers runs an activation by its config name (activations.py): `gelu_new` and `gelu_fast` are Python
 * expressions of element-wise ops; every other name is one kernel (`gelu`, `gelu_pytorch_tanh`, `silu`, `relu`).
 */
export function activationOf(
  name: string | undefined,
  traits: Pick<TypeTraits, 'activation'>,
): ModelSpec['activation'] {
  if (name === undefined) return traits.activation ?? 'fused'
  return name === 'gelu_new' ? 'gelu-new' : name === 'gelu_fast' ? 'gelu-fast' : 'fused'
}

/** The model types whose conventions rigfit knows; others are read from their fields where possible. */
export const SUPPORTED_MODEL_TYPES: readonly string[] = Object.keys(MODEL_TYPE_TRAITS).sort()

/** The traits of a known model type; undefined for others (and for names such as `constructor`). */
export function traitsOf(modelType: string): TypeTraits | undefined {
  return Object.hasOwn(MODEL_TYPE_TRAITS, modelType) ? MODEL_TYPE_TRAITS[modelType] : undefined
}
