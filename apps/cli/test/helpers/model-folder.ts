import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** A small Llama-layout config.json, as transformers writes one. */
export const SMALL_LLAMA_CONFIG = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 64,
  intermediate_size: 176,
  num_hidden_layers: 3,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  vocab_size: 320,
  max_position_embeddings: 512,
  hidden_act: 'silu',
  rms_norm_eps: 1e-5,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
}

type Tensor = [name: string, dtype: string, shape: number[]]

/** The tensors transformers' LlamaForCausalLM saves for a config: names and shapes as in a real checkpoint. */
export function llamaTensors(config: typeof SMALL_LLAMA_CONFIG, dtype = 'BF16'): Tensor[] {
  const h = config.hidden_size
  const f = config.intermediate_size
  const headDim = h / config.num_attention_heads
  const kv = config.num_key_value_heads * headDim
  const tensors: Tensor[] = [['model.embed_tokens.weight', dtype, [config.vocab_size, h]]]
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const p = `model.layers.${i}`
    tensors.push(
      [`${p}.self_attn.q_proj.weight`, dtype, [h, h]],
      [`${p}.self_attn.k_proj.weight`, dtype, [kv, h]],
      [`${p}.self_attn.v_proj.weight`, dtype, [kv, h]],
      [`${p}.self_attn.o_proj.weight`, dtype, [h, h]],
      [`${p}.mlp.gate_proj.weight`, dtype, [f, h]],
      [`${p}.mlp.up_proj.weight`, dtype, [f, h]],
      [`${p}.mlp.down_proj.weight`, dtype, [h, f]],
      [`${p}.input_layernorm.weight`, dtype, [h]],
      [`${p}.post_attention_layernorm.weight`, dtype, [h]],
    )
  }
  tensors.push(['model.norm.weight', dtype, [h]])
  if (!config.tie_word_embeddings) tensors.push(['lm_head.weight', dtype, [config.vocab_size, h]])
  return tensors
}

export const elementsOf = (tensors: Tensor[]) =>
  tensors.reduce((sum, [, , shape]) => sum + shape.reduce((a, b) => a * b, 1), 0)

const BITS: Record<string, number> = { BF16: 16, F16: 16, F32: 32 }

/** Writes a real safetensors file: the 8-byte little-endian header length, the JSON header, zeroed tensor data. */
export function writeSafetensors(path: string, tensors: Tensor[]): number {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } }
  let offset = 0
  for (const [name, dtype, shape] of tensors) {
    const bytes = (shape.reduce((a, b) => a * b, 1) * (BITS[dtype] as number)) / 8
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes] }
    offset += bytes
  }
  const json = Buffer.from(JSON.stringify(header))
  const length = Buffer.alloc(8)
  length.writeBigUInt64LE(BigInt(json.length))
  writeFileSync(path, Buffer.concat([length, json, Buffer.alloc(offset)]))
  return offset
}

/**
 * A downloaded model folder: config.json and its weights, in one file or in `shards` files with
 * model.safetensors.index.json (as save_pretrained writes them). Returns the folder and the tensor bytes.
 */
export function writeModelFolder(
  dir: string,
  options: { config?: Record<string, unknown>; tensors?: Tensor[]; shards?: number } = {},
): { dir: string; bytes: number } {
  mkdirSync(dir, { recursive: true })
  const config = { ...SMALL_LLAMA_CONFIG, ...options.config }
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2))
  const tensors = options.tensors ?? llamaTensors(config as typeof SMALL_LLAMA_CONFIG)
  const shards = options.shards ?? 1
  if (shards === 1) return { dir, bytes: writeSafetensors(join(dir, 'model.safetensors'), tensors) }
  const weightMap: Record<string, string> = {}
  let bytes = 0
  for (let s = 0; s < shards; s++) {
    const name = `model-${String(s + 1).padStart(5, '0')}-of-${String(shards).padStart(5, '0')}.safetensors`
    const part = tensors.filter((_, i) => i % shards === s)
    for (const [tensor] of part) weightMap[tensor] = name
    bytes += writeSafetensors(join(dir, name), part)
  }
  writeFileSync(
    join(dir, 'model.safetensors.index.json'),
    JSON.stringify({ metadata: { total_size: bytes }, weight_map: weightMap }, null, 2),
  )
  return { dir, bytes }
}
