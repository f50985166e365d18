import { closeSync, fstatSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs'
import { isAbsolute, relative, sep } from 'node:path'
import type { PackFile } from '../packs/parse-pack.js'
import { problem } from '../packs/parse-pack.js'
import type { PackProblem } from '../schemas/rule-pack.js'

/** A path as messages show it: relative to the working directory when inside it. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path)
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path
}

export function statOrNull(path: string) {
  try {
    return statSync(path)
  } catch {
    return null
  }
}

/** The real path (links resolved), or null when it does not exist. */
export function realPathOrNull(path: string): string | null {
  try {
    return realpathSync(path)
  } catch {
    return null
  }
}

/** Whether `path`, links resolved, lies inside the folder `root` (itself resolved). */
export function staysInside(path: string, root: string): boolean {
  const real = realPathOrNull(path)
  const realRoot = realPathOrNull(root)
  if (real === null || realRoot === null) return false
  return real === realRoot || real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)
}

/** *.json files of a folder, sorted; none when the folder is missing. */
export function listJsonFiles(dir: string): string[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names.filter((name) => name.endsWith('.json') && !name.startsWith('.')).sort()
}

export interface ReadOptions {
  /** The folder the file must stay inside once links are resolved (a pack folder): a link out of it is refused. */
  within?: string
}

/**
 * The most a profile, plan or manifest given on the command line may hold. Real ones are tens of kilobytes; the
 * bound keeps a wrong file or an endless pipe from filling memory.
 */
export const MAX_INPUT_DOCUMENT_BYTES = 16 * 1024 * 1024

export type TextRead =
  | { ok: true; text: string }
  /** `timedOut`: a FIFO or pipe that did not deliver within its deadline (see readInputText). */
  | { ok: false; tooLarge: boolean; message: string; timedOut?: true }

/**
 * Reads a regular file of at most `maxBytes` bytes. The bound counts the bytes actually read, not the size the
 * file reports (files under /proc report 0), and a file over it is refused, never truncated. Messages name the
 * file, never its content.
 */
export function readTextFile(path: string, maxBytes: number, options: ReadOptions = {}): TextRead {
  const fail = (message: string, tooLarge = false): TextRead => ({ ok: false, tooLarge, message })
  const stats = statOrNull(path)
  const readable = (st: { isFile(): boolean }) => st.isFile()
  if (stats === null || !readable(stats)) return fail(stats ? 'not a regular file' : 'no such file')
  if (options.within !== undefined && !staysInside(path, options.within))
    return fail(`is a link to a file outside ${displayPath(options.within)}; a pack reads its own files only`)
  if (stats.size > maxBytes) return fail(`${stats.size} bytes is over the limit of ${maxBytes} bytes`, true)
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    return fail(`cannot read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  try {
    // The file may have been swapped between the stat and the open: check what was opened.
    if (!readable(fstatSync(fd))) return fail('not a regular file')
    // Sized from the stat (one byte more, to see the end), grown while a file that reported less keeps going.
    let buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(stats.size + 1, 4096)))
    let total = 0
    for (;;) {
      if (total === buffer.length) {
        const grown = Buffer.allocUnsafe(Math.min(maxBytes + 1, buffer.length * 2))
        buffer.copy(grown, 0, 0, total)
        buffer = grown
      }
      const read = readSync(fd, buffer, total, buffer.length - total, null)
      if (read === 0) break
      total += read
      if (total > maxBytes) return fail(`over the limit of ${maxBytes} bytes`, true)
    }
    return { ok: true, text: withoutByteOrderMark(buffer.toString('utf8', 0, total)) }
  } catch (error) {
    return fail(`cannot read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`)
  } finally {
    closeSync(fd)
  }
}

/** The text without a leading UTF-8 byte-order mark, which editors on Windows add and JSON.parse refuses. */
export function withoutByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/** {@link readTextFile} for pack files: the text, or the problem naming the file. */
export function readLimited(
  path: string,
  maxBytes: number,
  options: ReadOptions = {},
): PackFile | { problem: PackProblem } {
  const file = displayPath(path)
  const read = readTextFile(path, maxBytes, options)
  if (read.ok) return { file, text: read.text }
  return {
    problem: problem(read.tooLarge ? 'E_PACK_TOO_LARGE' : 'E_PACK_IO', null, file, null, '$', read.message),
  }
}
