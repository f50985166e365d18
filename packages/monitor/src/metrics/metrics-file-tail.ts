import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs'

const MAX_READ = 1024 * 1024

/**
 * Follows a metrics file the trainer appends to (JSON lines or printed dicts). Starts at the file's end as it
 * is when the monitor starts, so an old run's lines are not read as this one's; a truncated file is read anew.
 */
export class MetricsFileTail {
  private offset: number
  private partial = ''

  constructor(private readonly path: string) {
    this.offset = sizeOf(path) ?? 0
  }

  /** The complete lines appended since the last call. */
  poll(): string[] {
    let fd: number
    try {
      // Non-blocking: a FIFO put in the file's place must not stop the monitor (opening one waits for a writer).
      fd = openSync(this.path, constants.O_RDONLY | constants.O_NONBLOCK)
    } catch {
      return []
    }
    try {
      const stats = fstatSync(fd)
      // Only a regular file is followed by size; anything else is not a metrics file and is not read.
      if (!stats.isFile()) return []
      const size = stats.size
      if (size < this.offset) {
        this.offset = 0
        this.partial = ''
      }
      if (size === this.offset) return []
      const length = Math.min(MAX_READ, size - this.offset)
      const buffer = Buffer.alloc(length)
      const read = readSync(fd, buffer, 0, length, this.offset)
      this.offset += read
      const text = this.partial + buffer.subarray(0, read).toString('utf8')
      const lines = text.split('\n')
      this.partial = lines.pop() ?? ''
      return lines.map((line) => line.trim()).filter((line) => line !== '')
    } finally {
      closeSync(fd)
    }
  }
}

function sizeOf(path: string): number | null {
  try {
    return statSync(path).size
  } catch {
    return null
  }
}
