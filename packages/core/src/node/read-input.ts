import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { readTextFile, statOrNull, type TextRead, withoutByteOrderMark } from './files.js'

/** How long a FIFO or pipe given as an input file may take to deliver its whole text, by default. */
export const DEFAULT_INPUT_TIMEOUT_MS = 10_000
const POLL_MS = 20

/**
 * Reads an input document: a regular file as readTextFile does, or a FIFO or pipe (`--plan <(rigfit plan
 * --json)`) read without ever blocking, so that one with no writer, or a writer that never finishes, fails after
 * `timeoutMs` instead of hanging. Devices, folders and sockets are refused.
 */
export async function readInputText(path: string, maxBytes: number, timeoutMs: number): Promise<TextRead> {
  const stats = statOrNull(path)
  if (stats === null || !stats.isFIFO()) return readTextFile(path, maxBytes)
  const fail = (message: string, tooLarge = false): TextRead => ({ ok: false, tooLarge, message })
  let fd: number
  try {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer, for ever.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    return fail(`cannot read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  try {
    if (!fstatSync(fd).isFIFO()) return fail('not a regular file')
    return await drain(fd, maxBytes, timeoutMs)
  } finally {
    closeSync(fd)
  }
}

/**
 * Reads a non-blocking pipe to its end. A read of 0 bytes is the end only once a writer was seen (data or
 * EAGAIN); before that it means no writer has opened the FIFO yet.
 */
async function drain(fd: number, maxBytes: number, timeoutMs: number): Promise<TextRead> {
  const deadline = Date.now() + timeoutMs
  const buffer = Buffer.alloc(maxBytes + 1)
  let total = 0
  let writerSeen = false
  for (;;) {
    let read: number
    try {
      read = readSync(fd, buffer, total, buffer.length - total, null)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN')
        return {
          ok: false,
          tooLarge: false,
          message: `cannot read: ${(error as NodeJS.ErrnoException).code}`,
        }
      read = -1
      writerSeen = true
    }
    if (read > 0) {
      writerSeen = true
      total += read
      if (total > maxBytes)
        return { ok: false, tooLarge: true, message: `over the limit of ${maxBytes} bytes` }
      continue
    }
    if (read === 0 && writerSeen)
      return { ok: true, text: withoutByteOrderMark(buffer.toString('utf8', 0, total)) }
    if (Date.now() >= deadline) {
      const seconds = Math.round(timeoutMs / 100) / 10
      return {
        ok: false,
        tooLarge: false,
        timedOut: true,
        message: writerSeen
          ? `a pipe that did not finish within ${seconds} s`
          : `a FIFO that nothing wrote to within ${seconds} s`,
      }
    }
    await delay(POLL_MS)
  }
}
