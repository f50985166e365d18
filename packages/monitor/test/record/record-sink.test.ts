import { execFileSync } from 'node:child_process'
import { existsSync, lstatSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { isRigfitError } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { RecordSink } from '../../src/record/record-sink.js'

const noFileError = () => {}

describe('RecordSink', () => {
  it('writes every record to the file and all but output lines to the JSON stream', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-sink-'))
    const jsonOut = new PassThrough()
    let json = ''
    jsonOut.on('data', (chunk: Buffer) => {
      json += chunk.toString('utf8')
    })
    const sink = RecordSink.open(join(dir, 'monitor.jsonl'), {
      force: false,
      jsonOut,
      onFileError: noFileError,
    })
    sink.write({ type: 'notice', time: '2025-01-01T00:00:00.000Z', level: 'info', message: 'hello' })
    sink.write({
      type: 'output',
      time: '2025-01-01T00:00:01.000Z',
      attempt: 1,
      stream: 'stdout',
      line: 'step 1',
    })
    await sink.close()
    const lines = readFileSync(join(dir, 'monitor.jsonl'), 'utf8').trim().split('\n')
    expect(lines.map((line) => JSON.parse(line).type)).toEqual(['notice', 'output'])
    expect(
      json
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).type),
    ).toEqual(['notice'])
  })

  it('never replaces an existing log unless forced', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-sink-'))
    const path = join(dir, 'monitor.jsonl')
    writeFileSync(path, 'old\n')
    let error: unknown
    try {
      RecordSink.open(path, { force: false, jsonOut: null, onFileError: noFileError })
    } catch (caught) {
      error = caught
    }
    expect(isRigfitError(error) && error.code === 'E_LOG_EXISTS' && error.kind === 'exists').toBe(true)
    expect(readFileSync(path, 'utf8')).toBe('old\n')
    const sink = RecordSink.open(path, { force: true, jsonOut: null, onFileError: noFileError })
    await sink.close()
    expect(readFileSync(path, 'utf8')).toBe('')
  })

  it('with --force refuses a symlink and leaves its target untouched, wherever it points', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-sink-'))
    const victim = join(dir, 'victim.txt')
    writeFileSync(victim, 'precious\n')
    for (const target of [victim, join(dir, 'missing.txt')]) {
      const path = join(dir, 'monitor.jsonl')
      symlinkSync(target, path)
      let error: unknown
      try {
        RecordSink.open(path, { force: true, jsonOut: null, onFileError: noFileError })
      } catch (caught) {
        error = caught
      }
      expect(isRigfitError(error) && error.code === 'E_LOG_EXISTS').toBe(true)
      expect(String((error as Error).message)).toMatch(/symbolic link.*regular files/)
      expect(lstatSync(path).isSymbolicLink()).toBe(true)
      expect(readFileSync(victim, 'utf8')).toBe('precious\n')
      expect(existsSync(join(dir, 'missing.txt'))).toBe(false)
      unlinkSync(path)
    }
  })

  it.runIf(process.platform !== 'win32')(
    'with --force refuses a FIFO instead of writing into it',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'rigfit-sink-'))
      const path = join(dir, 'monitor.jsonl')
      execFileSync('mkfifo', [path])
      expect(() => RecordSink.open(path, { force: true, jsonOut: null, onFileError: noFileError })).toThrow(
        /a FIFO, not a regular file/,
      )
      expect(lstatSync(path).isFIFO()).toBe(true)
    },
  )

  it('rotates to monitor.1.jsonl at the cap, keeping every record in one of the two files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-sink-'))
    const path = join(dir, 'monitor.jsonl')
    const maxBytes = 2000
    const sink = RecordSink.open(path, { force: false, jsonOut: null, onFileError: noFileError, maxBytes })
    const count = 200
    for (let i = 0; i < count; i += 1)
      sink.write({ type: 'notice', time: '2025-01-01T00:00:00.000Z', level: 'info', message: `line ${i}` })
    await sink.close()
    const current = readFileSync(path, 'utf8')
    const rotated = readFileSync(join(dir, 'monitor.1.jsonl'), 'utf8')
    for (const text of [current, rotated]) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(maxBytes)
    const numbers = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((line) => Number(JSON.parse(line).message.slice(5)))
    // The newest records: the rotated file is followed directly by the current one.
    const kept = [...numbers(rotated), ...numbers(current)]
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => count - kept.length + i))
    expect(kept.at(-1)).toBe(count - 1)
  })
})
