import { readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { isRigfitError } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { RecordSink } from './record-sink.js'

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
})
