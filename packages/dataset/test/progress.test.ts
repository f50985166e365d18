import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { countDatasetTokens } from '../src/count-dataset.js'
import { barLine, type ProgressStream, progressBar } from '../src/progress-bar.js'
import { tempDir, WORDS, writeJsonl } from './helpers.js'

/** A stream that keeps what was written, as a terminal or as a log file. */
function recorder(isTTY: boolean): ProgressStream & { text: () => string } {
  const chunks: string[] = []
  return { isTTY, columns: 100, write: (chunk: string) => chunks.push(chunk), text: () => chunks.join('') }
}

describe('progress of a count', () => {
  it('reports bytes read, strictly increasing, ending at the file size', async () => {
    const dir = tempDir()
    const rows = Array.from({ length: 60_000 }, (_, index) => ({ text: `${WORDS.join(' ')} ${index}` }))
    const path = writeJsonl(join(dir, 'rows.jsonl'), rows)
    const calls: Array<[number, number]> = []
    const count = await countDatasetTokens(path, { onProgress: (read, total) => calls.push([read, total]) })
    expect(count.bytes).toBeGreaterThan(4 * 2 ** 20)
    expect(calls.length).toBeGreaterThanOrEqual(4)
    for (const [index, [read, total]] of calls.entries()) {
      expect(total).toBe(count.bytes)
      if (index > 0) expect(read).toBeGreaterThan(calls[index - 1]?.[0] ?? 0)
    }
    expect(calls.at(-1)).toEqual([count.bytes, count.bytes])
  })

  it('stops with the signal when aborted part-way', async () => {
    const dir = tempDir()
    const rows = Array.from({ length: 40_000 }, () => ({ text: WORDS.join(' ') }))
    const path = writeJsonl(join(dir, 'rows.jsonl'), rows)
    const controller = new AbortController()
    const seen: number[] = []
    const counting = countDatasetTokens(path, {
      signal: controller.signal,
      onProgress: (read) => {
        seen.push(read)
        controller.abort()
      },
    })
    await expect(counting).rejects.toMatchObject({ name: 'AbortError' })
    expect(seen).toHaveLength(1)
  })
})

describe('progressBar', () => {
  it('redraws one terminal line in place, at most every 100 ms, and ends it', () => {
    let clock = 0
    const stream = recorder(true)
    const bar = progressBar(stream, { label: 'data.jsonl', now: () => clock })
    bar.update(0, 2 ** 30)
    clock = 50
    bar.update(2 ** 28, 2 ** 30) // too soon: not drawn
    clock = 150
    bar.update(2 ** 29, 2 ** 30)
    bar.done()
    const text = stream.text()
    const drawings = text.split('\r').filter(Boolean)
    expect(drawings).toHaveLength(3)
    expect(drawings[0]).toContain('  0%')
    expect(drawings[1]).toContain(' 50%  512.0 MiB of 1.0 GiB')
    expect(text.endsWith('\n')).toBe(true)
    expect(text.split('\n')).toHaveLength(2)
  })

  it('writes a plain line every few seconds to a stream that is not a terminal, and nothing for a quick count', () => {
    let clock = 0
    const log = recorder(false)
    const bar = progressBar(log, { label: 'data.jsonl', now: () => clock })
    for (let second = 0; second <= 12; second += 1) {
      clock = second * 1000
      bar.update(second * 10, 120)
    }
    bar.done()
    expect(log.text()).not.toContain('\r')
    expect(log.text().trim().split('\n')).toEqual([
      'data.jsonl: 41% (0.0 MiB of 0.0 MiB)',
      'data.jsonl: 83% (0.0 MiB of 0.0 MiB)',
      'data.jsonl: 100% (0.0 MiB of 0.0 MiB)',
    ])

    const quiet = recorder(false)
    const quick = progressBar(quiet, { now: () => 0 })
    quick.update(50, 100)
    quick.update(100, 100)
    quick.done()
    expect(quiet.text()).toBe('')
  })

  it('never draws a line wider than the terminal', () => {
    for (const width of [20, 40, 60, 80, 120]) {
      expect(
        barLine('a-rather-long-dataset-file-name.jsonl', 3 * 2 ** 30, 7 * 2 ** 30, width).length,
      ).toBeLessThan(width)
    }
  })
})
