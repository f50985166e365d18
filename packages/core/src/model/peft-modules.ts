import { deepFreeze } from '../deep-freeze.js'
import type { LoraTarget } from '../schemas/estimate.js'

/** One linear layer of a transformer block: its dotted name inside the block, and the rigfit targets it is. */
export interface BlockLinear {
  path: string
  /** A fused projection (GPT-2's `c_attn`, Phi-3's `gate_up_proj`) is several targets, priced as its parts. */
  targets: readonly LoraTarget[]
}

/** The linear layers Transformers names in one block of a model type, with where the names come from. */
export interface ModuleLayout {
  /** The block's own dotted name, as `model.named_modules()` gives it (`model.layers.0`). */
  block: string
  linears: readonly BlockLinear[]
  /** Transformers' modeling file that defines the names. */
  source: string
}

const TF =
  'https://github.com/huggingface/transformers/blob/008e574391258935f3ecc3035c882e73bbcac419/src/transformers/models'
const TF4 = 'https://github.com/huggingface/transformers/blob/v4.46.0/src/transformers/models'

const linear = (path: string, ...targets: LoraTarget[]): BlockLinear => ({ path, targets })

const LLAMA_ATTENTION = [
  linear('self_attn.q_proj', 'q'),
  linear('self_attn.k_proj', 'k'),
  linear('self_attn.v_proj', 'v'),
  linear('self_attn.o_proj', 'o'),
]
const llamaLike = (type: string): ModuleLayout => ({
  block: 'model.layers.0',
  linears: [
    ...LLAMA_ATTENTION,
    linear('mlp.gate_proj', 'gate'),
    linear('mlp.up_proj', 'up'),
    linear('mlp.down_proj', 'down'),
  ],
  source: `${TF}/${type}/modeling_${type}.py`,
})
const gpt2Like = (type: string): ModuleLayout => ({
  block: 'transformer.h.0',
  linears: [
    linear('attn.c_attn', 'q', 'k', 'v'),
    linear('attn.c_proj', 'o'),
    linear('mlp.c_fc', 'up'),
    linear('mlp.c_proj', 'down'),
  ],
  source: `${TF4}/${type}/modeling_${type}.py`,
})
const bertLike = (type: string): ModuleLayout => ({
  block: `${type}.encoder.layer.0`,
  linears: [
    linear('attention.self.query', 'q'),
    linear('attention.self.key', 'k'),
    linear('attention.self.value', 'v'),
    linear('attention.output.dense', 'o'),
    linear('intermediate.dense', 'up'),
    linear('output.dense', 'down'),
  ],
  source: `${TF4}/${type}/modeling_${type}.py`,
})

/** GPT-NeoX's names, which Falcon shares under another attention name. */
const neoxLike = (block: string, attention: string, source: string): ModuleLayout => ({
  block,
  linears: [
    linear(`${attention}.query_key_value`, 'q', 'k', 'v'),
    linear(`${attention}.dense`, 'o'),
    linear('mlp.dense_h_to_4h', 'up'),
    linear('mlp.dense_4h_to_h', 'down'),
  ],
  source,
})

/**
 * The Hugging Face module names of each model type's block, as PEFT's `target_modules` matches them. The output
 * head, a classifier, BERT's pooler and a mixture-of-experts router are outside the blocks: rigfit prices adapters
 * on the blocks' linear layers only.
 */
export const MODULE_LAYOUTS: Readonly<Record<string, ModuleLayout>> = deepFreeze<
  Record<string, ModuleLayout>
>({
  llama: llamaLike('llama'),
  mistral: llamaLike('mistral'),
  qwen2: llamaLike('qwen2'),
  qwen3: llamaLike('qwen3'),
  gemma: llamaLike('gemma'),
  gemma2: llamaLike('gemma2'),
  gemma3_text: { ...llamaLike('gemma3'), block: 'model.language_model.layers.0' },
  olmo: llamaLike('olmo'),
  olmo2: llamaLike('olmo2'),
  stablelm: llamaLike('stablelm'),
  // Transformers 4.x names each expert's projections w1 (gate), w3 (up) and w2 (down).
  mixtral: {
    block: 'model.layers.0',
    linears: [
      ...LLAMA_ATTENTION,
      linear('block_sparse_moe.experts.0.w1', 'gate'),
      linear('block_sparse_moe.experts.0.w3', 'up'),
      linear('block_sparse_moe.experts.0.w2', 'down'),
    ],
    source: `${TF4}/mixtral/modeling_mixtral.py`,
  },
  phi3: {
    block: 'model.layers.0',
    linears: [
      linear('self_attn.qkv_proj', 'q', 'k', 'v'),
      linear('self_attn.o_proj', 'o'),
      linear('mlp.gate_up_proj', 'gate', 'up'),
      linear('mlp.down_proj', 'down'),
    ],
    source: `${TF}/phi3/modeling_phi3.py`,
  },
  phi: {
    block: 'model.layers.0',
    linears: [
      linear('self_attn.q_proj', 'q'),
      linear('self_attn.k_proj', 'k'),
      linear('self_attn.v_proj', 'v'),
      linear('self_attn.dense', 'o'),
      linear('mlp.fc1', 'up'),
      linear('mlp.fc2', 'down'),
    ],
    source: `${TF}/phi/modeling_phi.py`,
  },
  gpt2: gpt2Like('gpt2'),
  gpt_bigcode: gpt2Like('gpt_bigcode'),
  gpt_neox: neoxLike('gpt_neox.layers.0', 'attention', `${TF}/gpt_neox/modeling_gpt_neox.py`),
  falcon: neoxLike('transformer.h.0', 'self_attention', `${TF4}/falcon/modeling_falcon.py`),
  mpt: {
    block: 'transformer.blocks.0',
    linears: [
      linear('attn.Wqkv', 'q', 'k', 'v'),
      linear('attn.out_proj', 'o'),
      linear('ffn.up_proj', 'up'),
      linear('ffn.down_proj', 'down'),
    ],
    source: `${TF4}/mpt/modeling_mpt.py`,
  },
  opt: {
    block: 'model.decoder.layers.0',
    linears: [
      linear('self_attn.q_proj', 'q'),
      linear('self_attn.k_proj', 'k'),
      linear('self_attn.v_proj', 'v'),
      linear('self_attn.out_proj', 'o'),
      linear('fc1', 'up'),
      linear('fc2', 'down'),
    ],
    source: `${TF4}/opt/modeling_opt.py`,
  },
  starcoder2: {
    block: 'model.layers.0',
    linears: [...LLAMA_ATTENTION, linear('mlp.c_fc', 'up'), linear('mlp.c_proj', 'down')],
    source: `${TF4}/starcoder2/modeling_starcoder2.py`,
  },
  bert: bertLike('bert'),
  roberta: bertLike('roberta'),
})

/** The layout of a model type; undefined for types whose module names rigfit does not know. */
export function moduleLayout(modelType: string): ModuleLayout | undefined {
  return Object.hasOwn(MODULE_LAYOUTS, modelType) ? MODULE_LAYOUTS[modelType] : undefined
}

/**
 * Whether a PEFT `target_modules` entry picks a block's linear layer: PEFT matches the module's full dotted name
 * exactly or by its end after a dot (`key == entry or key.endswith("." + entry)`), so `c_proj` picks GPT-2's
 * attention and MLP output, and `mlp.c_proj` the MLP's alone.
 */
export function pickedBy(entry: string, layout: ModuleLayout, layer: BlockLinear): boolean {
  const full = `${layout.block}.${layer.path}`
  return full === entry || full.endsWith(`.${entry}`)
}

/** The names a user may write for a layout: each linear's own name and its dotted path in the block. */
export function peftNames(layout: ModuleLayout): string[] {
  return [...new Set(layout.linears.flatMap((l) => [l.path.split('.').at(-1) as string, l.path]))]
}
