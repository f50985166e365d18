import { z } from 'zod'
import { RigfitError } from '../errors.js'

/**
 * The safetensors format: 8 bytes of little-endian header length, a JSON header naming each tensor's dtype, shape
 * and byte range (plus an optional `__metadata__` of strings), then the data. Only the header is ever read.
 */

/** safetensors' own limit on the header (MAX_HEADER_SIZE); a larger length is a broken or hostile file. */
export const MAX_SAFETENSORS_HEADER_BYTES = 100_000_000

/** Bytes per element of each safetensors dtype; sub-byte types are packed two (or more) to a byte. */
export const SAFETENSORS_DTYPE_BITS: Readonly<Record<string, number>> = Object.freeze({
  BOOL: 8,
  U8: 8,
  I8: 8,
  F8_E4M3: 8,
  F8_E5M2: 8,
  F8_E8M0: 8,
  I16: 16,
  U16: 16,
  F16: 16,
  BF16: 16,
  I32: 32,
  U32: 32,
  F32: 32,
  I64: 64,
  U64: 64,
  F64: 64,
  F4: 4,
  F6_E2M3: 6,
  F6_E3M2: 6,
})

const TensorEntry = z.strictObject({
  dtype: z.string(),
  shape: z.array(z.number().int().nonnegative()),
  data_offsets: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
})

export interface SafetensorsTensor {
  name: string
  dtype: string
  shape: number[]
  elements: number
  bytes: number
}

export interface SafetensorsHeader {
  tensors: SafetensorsTensor[]
  metadata: Record<string, string>
}

function malformed(source: string, problem: string): never {
  throw new RigfitError('input', 'E_SAFETENSORS', `${source}: ${problem}`, {
    suggestion:
      'The file is not a complete safetensors file: download it again, or remove it from the folder.',
    details: { source },
  })
}

/** The header length the first 8 bytes give; a file shorter than that or a length over the limit is refused. */
export function safetensorsHeaderLength(first8: Uint8Array, source: string): number {
  if (first8.length < 8) malformed(source, 'is shorter than the 8-byte header length')
  const view = new DataView(first8.buffer, first8.byteOffset, 8)
  const length = view.getBigUint64(0, true)
  if (length === 0n || length > BigInt(MAX_SAFETENSORS_HEADER_BYTES))
    malformed(source, `header length ${length} is outside 1 to ${MAX_SAFETENSORS_HEADER_BYTES} bytes`)
  return Number(length)
}

/**
 * The tensors of a safetensors header (the JSON text after the length). Each entry is checked: a known dtype, a
 * shape, and a byte range as long as the shape needs, so a header cannot claim more than it holds.
 */
export function parseSafetensorsHeader(text: string, source: string): SafetensorsHeader {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    malformed(source, 'header is not JSON')
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    malformed(source, 'header is not an object')
  const tensors: SafetensorsTensor[] = []
  let metadata: Record<string, string> = {}
  for (const [name, value] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      const parsed = z.record(z.string(), z.string()).safeParse(value)
      if (!parsed.success) malformed(source, '__metadata__ must map strings to strings')
      metadata = parsed.data
      continue
    }
    const parsed = TensorEntry.safeParse(value)
    if (!parsed.success) malformed(source, `tensor "${name}" needs dtype, shape and data_offsets`)
    const { dtype, shape, data_offsets } = parsed.data
    const bits = SAFETENSORS_DTYPE_BITS[dtype]
    if (bits === undefined || !Object.hasOwn(SAFETENSORS_DTYPE_BITS, dtype))
      malformed(source, `tensor "${name}" has unknown dtype "${dtype}"`)
    const elements = shape.reduce((a, b) => a * b, 1)
    const bytes = data_offsets[1] - data_offsets[0]
    if (!Number.isSafeInteger(elements) || bytes !== Math.ceil((elements * bits) / 8))
      malformed(
        source,
        `tensor "${name}" (${dtype} ${JSON.stringify(shape)}) does not match its ${bytes}-byte range`,
      )
    tensors.push({ name, dtype, shape, elements, bytes })
  }
  return { tensors, metadata }
}

const SafetensorsIndex = z.object({
  metadata: z.object({ total_size: z.number().nonnegative() }).loose().optional(),
  weight_map: z.record(z.string(), z.string()),
})

export interface SafetensorsIndex {
  /** Bytes of tensor data over every shard, when the index states it. */
  totalSize: number | null
  /** Shard file names, sorted, each once. */
  files: string[]
  tensors: number
}

/** `model.safetensors.index.json`: which shard holds each tensor, and the byte total. Shard names stay inside the folder. */
export function parseSafetensorsIndex(json: unknown, source: string): SafetensorsIndex {
  const parsed = SafetensorsIndex.safeParse(json)
  if (!parsed.success) malformed(source, 'needs a "weight_map" object of tensor names to shard files')
  const files = [...new Set(Object.values(parsed.data.weight_map))].sort()
  for (const file of files) {
    if (!/^[\w.-]+\.safetensors$/.test(file) || file.startsWith('.'))
      malformed(source, `shard "${file}" is not a safetensors file name in the same folder`)
  }
  return {
    totalSize: parsed.data.metadata?.total_size ?? null,
    files,
    tensors: Object.keys(parsed.data.weight_map).length,
  }
}
