import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isRigfitError, type RigfitError } from '@rigfit/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countDatasetTokens } from '../src/count-dataset.js'
import { recordText } from '../src/record-text.js'
import { expectedWordTokens, tempDir, WORDS, writeJsonl, writeWordTokenizer } from './helpers.js'

async function rejection(promise: Promise<unknown>): Promise<RigfitError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  )
  if (!isRigfitError(error)) throw new Error(`expected a RigfitError, got ${String(error)}`)
  return error
}

/** A text of known words joined by assorted whitespace, with some punctuation runs. */
const wordText = fc
  .array(
    fc.tuple(
      fc.constantFrom(...WORDS, 'unknown', '!', '...'),
      fc.constantFrom(' ', '  ', '\t', '\n', ' \r\n '),
    ),
    { maxLength: 40 },
  )
  .map((pairs) => pairs.map(([word, space]) => word + space).join(''))

/** Rows in every layout the counter reads. */
const row = fc.oneof(
  wordText.map((text) => ({ text })),
  fc.array(wordText, { maxLength: 5 }).map((turns) => ({
    messages: turns.map((content, index) => ({ role: index % 2 ? 'assistant' : 'user', content })),
  })),
  fc
    .array(wordText, { maxLength: 5 })
    .map((turns) => ({ conversations: turns.map((value) => ({ from: 'human', value })) })),
  fc.tuple(wordText, wordText).map(([prompt, completion]) => ({ prompt, completion, id: 7 })),
  fc
    .tuple(wordText, wordText, wordText)
    .map(([instruction, input, output]) => ({ instruction, input, output })),
)

function rowTexts(value: Record<string, unknown>): string[] {
  return recordText(value)?.texts ?? []
}

describe('countDatasetTokens on JSON Lines', () => {
  it('counts exactly with a tokenizer.json: the sum over rows of each text field', async () => {
    const dir = tempDir()
    const tokenizer = writeWordTokenizer(dir)
    let file = 0
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 30 }), async (rows) => {
        const expected = rows.flatMap(rowTexts).reduce((sum, text) => sum + expectedWordTokens(text), 0)
        fc.pre(expected > 0)
        const path = writeJsonl(join(dir, `rows-${file++}.jsonl`), rows)
        const count = await countDatasetTokens(path, { tokenizer })
        expect(count).toMatchObject({
          tokens: expected,
          examples: rows.length,
          method: 'tokenizer',
          tokenizer,
          bytesPerToken: null,
          format: 'jsonl',
        })
      }),
      { numRuns: 40 },
    )
  })

  it('without a tokenizer counts the text bytes (not the JSON around them) at 4 bytes per token', async () => {
    const dir = tempDir()
    let file = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'grapheme', minLength: 1 }), { minLength: 1, maxLength: 20 }),
        async (texts) => {
          const path = writeJsonl(
            join(dir, `plain-${file++}.jsonl`),
            texts.map((text) => ({ text, meta: 'x'.repeat(50) })),
          )
          const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0)
          const count = await countDatasetTokens(path)
          expect(count).toMatchObject({
            tokens: Math.ceil(bytes / 4),
            examples: texts.length,
            method: 'bytes-per-token',
            tokenizer: null,
            bytesPerToken: 4,
            fields: ['text'],
          })
        },
      ),
      { numRuns: 30 },
    )
  })

  it('skips blank lines, reads CRLF files and a last line without a break, and names the layouts found', async () => {
    const dir = tempDir()
    const tokenizer = writeWordTokenizer(dir)
    const path = join(dir, 'mixed.jsonl')
    writeFileSync(
      path,
      '{"text": "the model fits"}\r\n\r\n   \n{"messages": [{"role": "user", "content": "one gpu"}]}\n{"prompt": "train", "response": "step"}',
    )
    const count = await countDatasetTokens(path, { tokenizer })
    expect(count).toMatchObject({ tokens: 7, examples: 3 })
    expect(count.fields).toEqual(['text', 'messages[].content', 'prompt + completion/response'])
  })

  it('names the line of a malformed row', async () => {
    const dir = tempDir()
    const path = join(dir, 'broken.jsonl')
    writeFileSync(path, '{"text": "a"}\n\n{"text": "b"\n{"text": "c"}\n')
    const error = await rejection(countDatasetTokens(path))
    expect(error).toMatchObject({ kind: 'input', code: 'E_DATASET_JSONL', details: { file: path, line: 3 } })
    expect(error.message).toContain(`${path}:3`)
    expect(error.suggestion).toMatch(/one complete JSON object/)
  })

  it('rejects a row that is not an object, and a row with no text field, naming the line', async () => {
    const dir = tempDir()
    const arrays = join(dir, 'arrays.jsonl')
    writeFileSync(arrays, '{"text": "a"}\n["text", "b"]\n')
    expect(await rejection(countDatasetTokens(arrays))).toMatchObject({
      code: 'E_DATASET_JSONL',
      details: { line: 2 },
    })

    const other = writeJsonl(join(dir, 'other.jsonl'), [{ text: 'ok' }, { question: 'q', answer: 'a' }])
    const error = await rejection(countDatasetTokens(other))
    expect(error).toMatchObject({
      code: 'E_DATASET_NO_TEXT',
      details: { line: 2, keys: ['question', 'answer'] },
    })
    expect(error.message).toContain('question, answer')
    expect(error.suggestion).toContain('messages[].content')
  })

  it('rejects a missing file, a folder, an unknown extension, and a file with no text', async () => {
    const dir = tempDir()
    const missing = join(dir, 'nope.jsonl')
    expect(await rejection(countDatasetTokens(missing))).toMatchObject({
      kind: 'input',
      code: 'E_DATASET_NOT_FOUND',
      details: { file: missing },
    })
    const folder = join(dir, 'folder.jsonl')
    mkdirSync(folder)
    expect((await rejection(countDatasetTokens(folder))).message).toContain('is a folder')
    const csv = join(dir, 'data.csv')
    writeFileSync(csv, 'text\nhello\n')
    const format = await rejection(countDatasetTokens(csv))
    expect(format).toMatchObject({ code: 'E_DATASET_FORMAT', details: { extension: '.csv' } })
    expect(format.message).toMatch(/\.jsonl, \.txt and \.parquet/)
    const empty = join(dir, 'empty.jsonl')
    writeFileSync(empty, '\n\n')
    expect(await rejection(countDatasetTokens(empty))).toMatchObject({ code: 'E_DATASET_EMPTY' })
  })
})
