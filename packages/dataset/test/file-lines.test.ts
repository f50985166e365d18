import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fileLines, LineTooLongError } from '../src/read-text.js'
import { tempDir } from './helpers.js'

const MIB = 1 << 20

async function linesOf(path: string, bytes: number, max: number): Promise<string[]> {
  const out: string[] = []
  for await (const { text } of fileLines(path, bytes, {}, max)) out.push(text)
  return out
}

describe('fileLines', () => {
  it('reads the lines a split on line breaks gives, for lines shorter and longer than a read chunk', async () => {
    const dir = tempDir()
    // Lengths around the 1 MiB chunk, so that lines start, end and span chunk boundaries in every way.
    const lengths = fc.array(
      fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: MIB - 3, max: 2 * MIB + 3 })),
      { minLength: 1, maxLength: 5 },
    )
    await fc.assert(
      fc.asyncProperty(lengths, fc.boolean(), fc.boolean(), async (sizes, crlf, finalBreak) => {
        const lines = sizes.map((size, at) => String.fromCharCode(97 + (at % 26)).repeat(size))
        const text = lines.join(crlf ? '\r\n' : '\n') + (finalBreak ? '\n' : '')
        const path = join(dir, 'lines.jsonl')
        writeFileSync(path, text)
        const expected = text.split('\n').map((line) => line.replace(/\r$/, ''))
        if (finalBreak || expected.at(-1) === '') expected.pop()
        expect(await linesOf(path, text.length, 4 * MIB)).toEqual(expected)
      }),
      { numRuns: 15 },
    )
  })

  it('refuses a line past the limit with its number, once the limit is passed', async () => {
    const dir = tempDir()
    const path = join(dir, 'long.jsonl')
    writeFileSync(path, `{"text":"a"}\n{"text":"b"}\n${'x'.repeat(5 * MIB)}\n{"text":"c"}\n`)
    const read: string[] = []
    const error = await (async () => {
      try {
        for await (const { text } of fileLines(path, 6 * MIB, {}, 3 * MIB)) read.push(text)
      } catch (caught) {
        return caught
      }
      return null
    })()
    expect(error).toBeInstanceOf(LineTooLongError)
    expect((error as LineTooLongError).line).toBe(3)
    expect(read).toEqual(['{"text":"a"}', '{"text":"b"}'])
  })
})
