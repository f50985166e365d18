import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'

/**
 * A file that build-time validation writes for run time to trust: `{ format, hash, body }`, where body is JSON text
 * and hash its sha256, taken over exactly the bytes that are parsed. A file whose format or hash does not match is
 * not used at all.
 */
interface HashedFile {
  format: string
  hash: string
  body: string
}

export type HashedRead =
  | { ok: true; body: unknown }
  | { ok: false; reason: 'missing' | 'unreadable' | 'format' | 'hash' }

export const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex')

/** The file's text for `body` (any JSON value) under `format`. */
export function hashedFileText(format: string, body: unknown): string {
  const text = JSON.stringify(body)
  const file: HashedFile = { format, hash: sha256(text), body: text }
  return `${JSON.stringify(file)}\n`
}

/** Reads a hashed file, checking its format and hash; returns its parsed body. */
export function readHashedFile(path: string, format: string): HashedRead {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
    return { ok: false, reason: missing ? 'missing' : 'unreadable' }
  }
  let file: Partial<HashedFile>
  try {
    file = JSON.parse(text) as Partial<HashedFile>
  } catch {
    return { ok: false, reason: 'unreadable' }
  }
  if (file?.format !== format || typeof file.body !== 'string') return { ok: false, reason: 'format' }
  if (file.hash !== sha256(file.body)) return { ok: false, reason: 'hash' }
  return { ok: true, body: JSON.parse(file.body) }
}
