import { RigfitError } from '../errors.js'
import { editDistance } from './close-matches.js'
import { SUPPORTED_MODEL_TYPES } from './family-traits.js'

type Json = Record<string, unknown>

/**
 * Layouts rigfit's memory and speed model does not describe: pricing them as a plain decoder would be wrong, so a
 * config showing one is refused. Each test looks at the config's own fields, so a renamed model_type is caught too.
 */
const UNPRICEABLE: readonly { why: string; test: (config: Json, modelType: string) => boolean }[] = [
  {
    why: 'is an encoder-decoder (T5, BART style); rigfit prices decoder-only and encoder-only models',
    test: (c) => c.is_encoder_decoder === true,
  },
  {
    why: 'uses shared experts (or a separate expert width), which rigfit does not model; Mixtral-style experts are supported',
    test: (c, type) =>
      /moe/.test(type) ||
      has(c, 'n_shared_experts') ||
      has(c, 'shared_expert_intermediate_size') ||
      has(c, 'moe_intermediate_size'),
  },
  {
    why: 'uses latent (compressed) key/value attention, which rigfit does not model',
    test: (c) => has(c, 'kv_lora_rank') || has(c, 'q_lora_rank'),
  },
  {
    why: 'has state-space or recurrent layers, which rigfit does not model',
    test: (c, type) =>
      /mamba|rwkv|jamba|zamba|recurrent|xlstm|ssm/.test(type) ||
      has(c, 'state_size') ||
      has(c, 'ssm_cfg') ||
      has(c, 'mamba_d_state'),
  },
]

function has(config: Json, key: string): boolean {
  return config[key] !== undefined && config[key] !== null && config[key] !== 0 && config[key] !== false
}

function commonPrefix(a: string, b: string): number {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

/** The supported model type closest to `modelType`: the longest shared prefix, then the fewest edits. */
export function nearestSupportedModelType(modelType: string): string {
  const wanted = modelType.toLowerCase()
  const ranked = [...SUPPORTED_MODEL_TYPES].sort(
    (a, b) =>
      commonPrefix(wanted, b) - commonPrefix(wanted, a) ||
      editDistance(wanted, a) - editDistance(wanted, b) ||
      a.localeCompare(b),
  )
  return ranked[0] as string
}

/** Throws a RigfitError naming the model type and the nearest supported one when the config cannot be priced. */
export function refuseUnpriceable(config: Json, modelType: string, source: string): void {
  const found = UNPRICEABLE.find((entry) => entry.test(config, modelType))
  if (!found) return
  const nearest = nearestSupportedModelType(modelType)
  throw new RigfitError(
    'input',
    'E_MODEL_UNSUPPORTED',
    `${source}: model_type "${modelType}" ${found.why}, so rigfit cannot price it`,
    {
      suggestion: `The nearest supported model type is "${nearest}"; rigfit prices ${SUPPORTED_MODEL_TYPES.join(', ')} and configs of the same layout.`,
      details: { modelType, nearest, source },
    },
  )
}
