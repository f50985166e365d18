import { describe, expect, it } from 'vitest'
import { isRigfitError } from '../../src/errors.js'
import { findCatalogModel } from '../../src/model/catalog.js'
import { countParams } from '../../src/model/params.js'
import {
  MAX_SAFETENSORS_HEADER_BYTES,
  parseSafetensorsHeader,
  parseSafetensorsIndex,
  safetensorsHeaderLength,
} from '../../src/model/safetensors.js'
import { weightsFromHeaders, weightsFromIndex } from '../../src/model/weights.js'

function codeOf(run: () => unknown): string | undefined {
  try {
    run()
  } catch (error) {
    if (isRigfitError(error)) return error.code
    throw error
  }
  return undefined
}

function lengthBytes(length: bigint): Uint8Array {
  const bytes = new Uint8Array(8)
  new DataView(bytes.buffer).setBigUint64(0, length, true)
  return bytes
}

/** A header laid out as safetensors writes it: tensors back to back from offset 0. */
function header(tensors: [string, string, number[]][], metadata?: Record<string, string>) {
  const bits: Record<string, number> = { F32: 32, BF16: 16, F16: 16, I32: 32 }
  const json: Record<string, unknown> = metadata ? { __metadata__: metadata } : {}
  let offset = 0
  for (const [name, dtype, shape] of tensors) {
    const bytes = (shape.reduce((a, b) => a * b, 1) * (bits[dtype] as number)) / 8
    json[name] = { dtype, shape, data_offsets: [offset, offset + bytes] }
    offset += bytes
  }
  return JSON.stringify(json)
}

describe('safetensors headers', () => {
  it('reads the header length as 8 little-endian bytes, within the format limit', () => {
    for (const length of [1n, 255n, 65_536n, BigInt(MAX_SAFETENSORS_HEADER_BYTES)]) {
      expect(safetensorsHeaderLength(lengthBytes(length), 'f')).toBe(Number(length))
    }
    expect(codeOf(() => safetensorsHeaderLength(lengthBytes(0n), 'f'))).toBe('E_SAFETENSORS')
    expect(codeOf(() => safetensorsHeaderLength(lengthBytes(2n ** 63n), 'f'))).toBe('E_SAFETENSORS')
    expect(codeOf(() => safetensorsHeaderLength(new Uint8Array(4), 'f'))).toBe('E_SAFETENSORS')
  })

  it('counts elements and bytes of every tensor and keeps the metadata', () => {
    const parsed = parseSafetensorsHeader(
      header(
        [
          ['a', 'BF16', [4, 8]],
          ['b', 'F32', [3]],
          ['scalar', 'F32', []],
        ],
        { format: 'pt' },
      ),
      'f',
    )
    expect(parsed.metadata).toEqual({ format: 'pt' })
    expect(parsed.tensors.map((t) => [t.name, t.elements, t.bytes])).toEqual([
      ['a', 32, 64],
      ['b', 3, 12],
      ['scalar', 1, 4],
    ])
  })

  it.each([
    ['not JSON', '{'],
    ['an array', '[]'],
    ['an unknown dtype', JSON.stringify({ a: { dtype: 'Q4', shape: [2], data_offsets: [0, 1] } })],
    [
      'a range shorter than the shape',
      JSON.stringify({ a: { dtype: 'F32', shape: [4], data_offsets: [0, 8] } }),
    ],
    ['a missing shape', JSON.stringify({ a: { dtype: 'F32', data_offsets: [0, 8] } })],
    ['metadata that is not strings', JSON.stringify({ __metadata__: { n: 1 } })],
    [
      'an inherited dtype name',
      JSON.stringify({ a: { dtype: 'constructor', shape: [1], data_offsets: [0, 1] } }),
    ],
  ])('refuses %s', (_, text) => {
    expect(codeOf(() => parseSafetensorsHeader(text, 'f'))).toBe('E_SAFETENSORS')
  })

  it('reads an index: shards once, sorted, and the byte total; refuses shards outside the folder', () => {
    const index = parseSafetensorsIndex(
      {
        metadata: { total_size: 1000 },
        weight_map: {
          a: 'model-00002-of-00002.safetensors',
          b: 'model-00001-of-00002.safetensors',
          c: 'model-00001-of-00002.safetensors',
        },
      },
      'i',
    )
    expect(index).toEqual({
      totalSize: 1000,
      files: ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'],
      tensors: 3,
    })
    expect(codeOf(() => parseSafetensorsIndex({ weight_map: { a: '../x.safetensors' } }, 'i'))).toBe(
      'E_SAFETENSORS',
    )
    expect(codeOf(() => parseSafetensorsIndex({ weight_map: { a: 'x.bin' } }, 'i'))).toBe('E_SAFETENSORS')
    expect(codeOf(() => parseSafetensorsIndex({}, 'i'))).toBe('E_SAFETENSORS')
  })
})

describe('weights against the config', () => {
  const gpt2 = findCatalogModel('gpt2')
  if (!gpt2) throw new Error('gpt2 is in the catalog')
  const total = countParams(gpt2).total

  it('agree when the headers hold what the architecture defines, in any split over shards', () => {
    for (const split of [1, 2, 7]) {
      const per = Math.floor(total / split)
      const shapes = Array.from({ length: split }, (_, i) =>
        i === split - 1 ? total - per * (split - 1) : per,
      )
      const headers = shapes.map((n, i) => parseSafetensorsHeader(header([[`t${i}`, 'BF16', [n]]]), `s${i}`))
      const weights = weightsFromHeaders(gpt2, headers)
      expect(weights).toMatchObject({
        params: total,
        configParams: total,
        agrees: true,
        dtype: 'BF16',
        files: split,
      })
      expect(weights.bytes).toBe(total * 2)
    }
  })

  it('disagree beyond 1%, and name the dtype holding most parameters', () => {
    const headers = [
      parseSafetensorsHeader(
        header([
          ['big', 'F16', [Math.round(total * 0.98)]],
          ['small', 'F32', [10]],
        ]),
        's',
      ),
    ]
    const weights = weightsFromHeaders(gpt2, headers)
    expect(weights.agrees).toBe(false)
    expect(weights.dtype).toBe('F16')
  })

  it('from an index alone, divide its byte total by the size of the config dtype', () => {
    const index = { totalSize: total * 2, files: ['a.safetensors'], tensors: 1 }
    expect(weightsFromIndex(gpt2, index, 'bfloat16')).toMatchObject({
      params: total,
      agrees: true,
      from: 'index',
    })
    expect(weightsFromIndex(gpt2, index, 'float32')).toMatchObject({ params: total / 2, agrees: false })
    expect(weightsFromIndex(gpt2, index, undefined)).toBeNull()
    expect(weightsFromIndex(gpt2, { ...index, totalSize: null }, 'bfloat16')).toBeNull()
  })
})
