import { describeFuzzTargets, type FuzzTarget, mutatedJson } from '@rigfit/fuzz-kit'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { LineTooLongError, type NumberedLine, NumberedLines } from '../../src/read-text.js'
import { isRecord, recordText } from '../../src/record-text.js'

/**
 * The dataset readers fed mutated JSON Lines and long lines: the line splitter (over chunks, as the file is
 * read) and the record reader that picks each row's text. A line past the limit is refused with its number (an
 * answer); nothing crashes, the lines read are the text's own, and every text picked is a string.
 */
const MAX_LINE = 16 * 1024
const CHUNK = 61
const REFUSED = Symbol('refused')

const rows = [
  '{"text": "The quick brown fox."}',
  '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}',
  '{"instruction": "Add", "input": "1 2", "output": "3"}',
  '{"prompt": "Q?", "completion": "A."}',
  '{"conversations": [{"from": "human", "value": "x"}, {"from": "gpt", "value": "y"}]}',
]
const jsonl = fc
  .array(fc.oneof(mutatedJson(rows), fc.constantFrom(...rows)), { minLength: 1, maxLength: 6 })
  .map((lines) => lines.map((line) => line.replace(/\n/g, ' ')).join('\n'))
const long = fc
  .tuple(fc.constantFrom(...rows), fc.integer({ min: 1, max: 40_000 }), fc.boolean())
  .map(([row, length, crlf]) => `${row}${crlf ? '\r\n' : '\n'}{"text": "${'x'.repeat(length)}"}\n${row}`)

const lineReader: FuzzTarget = {
  name: 'jsonl lines',
  input: fc.oneof({ arbitrary: jsonl, weight: 3 }, { arbitrary: long, weight: 1 }),
  parse: (text) => {
    const splitter = new NumberedLines(MAX_LINE)
    const lines: NumberedLine[] = []
    try {
      for (let at = 0; at < text.length; at += CHUNK) lines.push(...splitter.push(text.slice(at, at + CHUNK)))
      lines.push(...splitter.end())
    } catch (error) {
      if (error instanceof LineTooLongError) return { text, refusedAt: error.line }
      throw error
    }
    return { text, lines }
  },
  check: (answer) => {
    const { text, lines, refusedAt } = answer as { text: string; lines?: NumberedLine[]; refusedAt?: number }
    // An empty text has no line; a final line break ends the last line rather than starting one.
    const expected = text === '' ? [] : text.split('\n').map((line) => line.replace(/\r$/, ''))
    if (text.endsWith('\n')) expected.pop()
    if (refusedAt !== undefined) {
      // The limit counts the line as read, a \r before its break included.
      const raw = text.split('\n')[refusedAt - 1]
      if (raw === undefined || raw.length <= MAX_LINE) throw new Error(`refused line ${refusedAt} wrongly`)
      return
    }
    if (expected.some((line) => line.length > MAX_LINE)) throw new Error('an over-long line was accepted')
    if (JSON.stringify(lines?.map((l) => l.text)) !== JSON.stringify(expected))
      throw new Error('the lines differ from the text')
  },
}

const recordReader: FuzzTarget = {
  name: 'jsonl records',
  input: mutatedJson(rows),
  parse: (line) => {
    let row: unknown
    try {
      row = JSON.parse(line)
    } catch {
      return REFUSED
    }
    return isRecord(row) ? recordText(row) : REFUSED
  },
  check: (answer) => {
    if (answer === REFUSED || answer === null) return
    const { texts } = answer as { texts: unknown[] }
    if (!texts.every((piece) => typeof piece === 'string')) throw new Error('a text that is not a string')
  },
}

describeFuzzTargets(
  { describe, it, expect, afterAll },
  'fuzz: the dataset readers',
  [lineReader, recordReader],
  'reader',
)
