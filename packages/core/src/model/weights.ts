import type { ModelSpec, ModelWeights } from '../schemas/model-spec.js'
import { countParams } from './params.js'
import { SAFETENSORS_DTYPE_BITS, type SafetensorsHeader, type SafetensorsIndex } from './safetensors.js'

/** How far the weights' count may stray from the config's before the two are said to disagree. */
export const WEIGHTS_AGREEMENT = 0.01

const TORCH_TO_SAFETENSORS: Readonly<Record<string, string>> = Object.freeze({
  float32: 'F32',
  float16: 'F16',
  bfloat16: 'BF16',
  float64: 'F64',
})

function summary(
  spec: ModelSpec,
  params: number,
  dtype: string,
  bytes: number,
  from: ModelWeights['from'],
  files: number,
): ModelWeights {
  const configParams = countParams(spec).total
  const agrees = Math.abs(params - configParams) <= WEIGHTS_AGREEMENT * configParams
  return { params, configParams, agrees, dtype, bytes, from, files }
}

/** The exact parameter count and the dtype holding most of it, from every shard's header. */
export function weightsFromHeaders(spec: ModelSpec, headers: readonly SafetensorsHeader[]): ModelWeights {
  const byDtype = new Map<string, number>()
  let params = 0
  let bytes = 0
  for (const header of headers) {
    for (const tensor of header.tensors) {
      params += tensor.elements
      bytes += tensor.bytes
      byDtype.set(tensor.dtype, (byDtype.get(tensor.dtype) ?? 0) + tensor.elements)
    }
  }
  const dtype = [...byDtype].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? 'F32'
  return summary(spec, params, dtype, bytes, 'headers', headers.length)
}

/**
 * The parameter count an index implies when its shards are not at hand: the byte total over the size of the
 * config's `torch_dtype`. Null when either is missing, since the count would be a guess.
 */
export function weightsFromIndex(
  spec: ModelSpec,
  index: SafetensorsIndex,
  torchDtype: unknown,
): ModelWeights | null {
  const dtype = typeof torchDtype === 'string' ? TORCH_TO_SAFETENSORS[torchDtype] : undefined
  if (index.totalSize === null || dtype === undefined) return null
  const bits = SAFETENSORS_DTYPE_BITS[dtype] as number
  const params = Math.round((index.totalSize * 8) / bits)
  return summary(spec, params, dtype, index.totalSize, 'index', index.files.length)
}
