import { closeSync, createWriteStream, openSync, type WriteStream } from 'node:fs'
import type { Writable } from 'node:stream'
import { type MonitorRecord, RigfitError } from '@rigfit/core'

/**
 * Appends every record to the run's JSONL file and, with --json, writes the same line to stdout (output
 * records stay in the file: with --json the trainer's own output goes to stderr). A closed stdout (the reader
 * of a pipe went away) silences stdout, never the file.
 */
export class RecordSink {
  private readonly file: WriteStream
  private jsonOut: Writable | null

  private constructor(fd: number, jsonOut: Writable | null, onFileError: (error: Error) => void) {
    this.file = createWriteStream('', { fd, encoding: 'utf8' })
    // A full disk must not end the training it records: say so once and carry on without the file.
    this.file.once('error', onFileError)
    this.file.on('error', () => {})
    this.jsonOut = jsonOut
    jsonOut?.on('error', () => {
      this.jsonOut = null
    })
  }

  /** Creates the log file; an existing one is an error unless `force` (then it is replaced). */
  static open(
    path: string,
    options: { force: boolean; jsonOut: Writable | null; onFileError: (error: Error) => void },
  ): RecordSink {
    let fd: number
    try {
      fd = openSync(path, options.force ? 'w' : 'wx')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EEXIST') {
        throw new RigfitError('exists', 'E_LOG_EXISTS', `${path} already exists`, {
          suggestion: 'Choose another --log-dir, or pass --force to replace the old log.',
        })
      }
      throw new RigfitError(
        'io',
        'E_LOG_WRITE',
        `cannot create ${path}: ${code ?? (error as Error).message}`,
        {
          suggestion: 'Check that --log-dir is writable.',
        },
      )
    }
    try {
      return new RecordSink(fd, options.jsonOut, options.onFileError)
    } catch (error) {
      closeSync(fd)
      throw error
    }
  }

  write(record: MonitorRecord): void {
    const line = `${JSON.stringify(record)}\n`
    if (!this.file.destroyed) this.file.write(line)
    if (record.type !== 'output') this.jsonOut?.write(line)
  }

  close(): Promise<void> {
    if (this.file.destroyed) return Promise.resolve()
    return new Promise((resolve) => {
      this.file.once('close', () => resolve())
      this.file.end()
    })
  }
}
