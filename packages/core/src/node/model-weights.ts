import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { RigfitError } from '../errors.js'
import {
  MAX_SAFETENSORS_HEADER_BYTES,
  parseSafetensorsHeader,
  parseSafetensorsIndex,
  type SafetensorsHeader,
  safetensorsHeaderLength,
} from '../model/safetensors.js'
import { weightsFromHeaders, weightsFromIndex } from '../model/weights.js'
import type { ModelSpec, ModelWeights } from '../schemas/model-spec.js'
import { readTextFile, statOrNull } from './files.js'

const INDEX_FILE = 'model.safetensors.index.json'
/** An index lists tensor names and shard files: megabytes at most, even for the largest models. */
const MAX_INDEX_BYTES = 32 * 1024 * 1024

function readFailure(file: string, message: string): never {
  throw new RigfitError('input', 'E_SAFETENSORS', `${file}: cannot be read (${message})`, {
    suggestion: 'Check the file and its permissions, or remove the broken weights from the folder.',
    details: { source: file },
  })
}

/** Reads exactly `length` bytes at `position`, or fails naming the file. */
function readExactly(fd: number, file: string, length: number, position: number): Buffer {
  const buffer = Buffer.alloc(length)
  let total = 0
  while (total < length) {
    const read = readSync(fd, buffer, total, length - total, position + total)
    if (read === 0) readFailure(file, `ends after ${position + total} bytes, inside its header`)
    total += read
  }
  return buffer
}

/** A safetensors file's header: 8 bytes of length, then that much JSON. The tensor data is never read. */
export function readSafetensorsHeader(file: string): SafetensorsHeader {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    readFailure(file, (error as NodeJS.ErrnoException).code ?? 'error')
  }
  try {
    const size = fstatSync(fd).size
    const length = safetensorsHeaderLength(readExactly(fd, file, Math.min(8, size), 0), file)
    if (length > MAX_SAFETENSORS_HEADER_BYTES || 8 + length > size)
      readFailure(file, `its header claims ${length} bytes but the file holds ${size}`)
    return parseSafetensorsHeader(readExactly(fd, file, length, 8).toString('utf8'), file)
  } finally {
    closeSync(fd)
  }
}

/**
 * What a model folder's safetensors weights hold, next to what its config implies; null when the folder has no
 * safetensors weights. The sharded index names the shards; when some are missing (only the config and index were
 * downloaded) the index's byte total over the config's `torch_dtype` stands in.
 */
export function readFolderWeights(
  dir: string,
  spec: ModelSpec,
  config: Record<string, unknown>,
): ModelWeights | null {
  const indexPath = join(dir, INDEX_FILE)
  if (statOrNull(indexPath)?.isFile()) {
    const read = readTextFile(indexPath, MAX_INDEX_BYTES)
    if (!read.ok) readFailure(indexPath, read.message)
    let json: unknown
    try {
      json = JSON.parse(read.text)
    } catch {
      json = null
    }
    const index = parseSafetensorsIndex(json, indexPath)
    const shards = index.files.map((name) => join(dir, name))
    if (shards.every((shard) => statOrNull(shard)?.isFile()))
      return weightsFromHeaders(spec, shards.map(readSafetensorsHeader))
    return weightsFromIndex(spec, index, config.torch_dtype ?? config.dtype)
  }
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return null
  }
  const files = names.filter((name) => name.endsWith('.safetensors') && !name.startsWith('.')).sort()
  if (files.length === 0) return null
  return weightsFromHeaders(
    spec,
    files.map((name) => readSafetensorsHeader(join(dir, name))),
  )
}
