import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isRigfitError } from '@rigfit/core'
import fc from 'fast-check'
import { parquetWriteFile } from 'hyparquet-writer'
import { describe, expect, it } from 'vitest'
import { countDatasetTokens } from '../src/count-dataset.js'
import { expectedWordTokens, tempDir, WORDS, writeWordTokenizer } from './helpers.js'

async function errorOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  )
  if (!isRigfitError(error)) throw new Error(`expected a RigfitError, got ${String(error)}`)
  return error
}

const sentence = fc
  .array(fc.constantFrom(...WORDS, '?'), { minLength: 1, maxLength: 30 })
  .map((words) => words.join(' '))

describe('countDatasetTokens on parquet', () => {
  it('counts a text column exactly over many row groups, with the progress ending at the file size', async () => {
    const dir = tempDir()
    const tokenizer = writeWordTokenizer(dir)
    let file = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(sentence, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 16 }),
        fc.constantFrom('SNAPPY' as const, 'UNCOMPRESSED' as const),
        async (texts, rowGroupSize, codec) => {
          const path = join(dir, `texts-${file++}.parquet`)
          parquetWriteFile({
            filename: path,
            columnData: [
              { name: 'id', data: texts.map((_, index) => index), type: 'INT32' },
              { name: 'text', data: texts, type: 'STRING' },
              { name: 'source', data: texts.map(() => 'ignored words here'), type: 'STRING' },
            ],
            rowGroupSize,
            codec,
          })
          const progress: number[] = []
          const count = await countDatasetTokens(path, {
            tokenizer,
            onProgress: (bytesRead, total) => {
              expect(total).toBe(readFileSync(path).length)
              progress.push(bytesRead)
            },
          })
          expect(count).toMatchObject({
            tokens: texts.reduce((sum, text) => sum + expectedWordTokens(text), 0),
            examples: texts.length,
            format: 'parquet',
            fields: ['text'],
          })
          expect(progress).toEqual([...progress].sort((a, b) => a - b))
          expect(progress.at(-1)).toBe(count.bytes)
        },
      ),
      { numRuns: 25 },
    )
  })

  it('reads prompt/completion columns by the same layouts as JSONL, and a row of nulls is no example', async () => {
    const dir = tempDir()
    const tokenizer = writeWordTokenizer(dir)
    const path = join(dir, 'pairs.parquet')
    parquetWriteFile({
      filename: path,
      columnData: [
        { name: 'prompt', data: ['the model', null, 'one gpu'], type: 'STRING' },
        { name: 'completion', data: ['fits', null, 'train step batch'], type: 'STRING' },
      ],
    })
    const count = await countDatasetTokens(path, { tokenizer })
    expect(count).toMatchObject({ tokens: 8, examples: 2, fields: ['prompt + completion/response'] })
  })

  it('reads chat rows stored as a list of structs', async () => {
    const dir = tempDir()
    const tokenizer = writeWordTokenizer(dir)
    const path = join(dir, 'chat.parquet')
    parquetWriteFile({
      filename: path,
      columnData: [
        {
          name: 'messages',
          data: [
            [
              { role: 'user', content: 'the model' },
              { role: 'assistant', content: 'fits on one gpu' },
            ],
            [{ role: 'user', content: 'data' }],
          ],
        },
      ],
      schema: [
        { name: 'root', num_children: 1 },
        { name: 'messages', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', repetition_type: 'OPTIONAL', num_children: 2 },
        { name: 'role', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        { name: 'content', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      ],
    })
    const count = await countDatasetTokens(path, { tokenizer })
    expect(count).toMatchObject({ tokens: 7, examples: 2, fields: ['messages[].content'] })
  })

  it('counts every string column when no column is named by a layout', async () => {
    const dir = tempDir()
    const path = join(dir, 'other.parquet')
    parquetWriteFile({
      filename: path,
      columnData: [
        { name: 'question', data: ['abcd', 'ab'], type: 'STRING' },
        { name: 'answer', data: ['abcdefgh', ''], type: 'STRING' },
        { name: 'score', data: [1.5, 2], type: 'DOUBLE' },
      ],
    })
    const count = await countDatasetTokens(path)
    // 4 + 8 + 2 bytes of text at 4 bytes per token, rounded up.
    expect(count).toMatchObject({
      tokens: 4,
      examples: 2,
      method: 'bytes-per-token',
      fields: ['question', 'answer'],
    })
  })

  it('rejects a parquet file without string columns, and a file that is not parquet', async () => {
    const dir = tempDir()
    const numbers = join(dir, 'numbers.parquet')
    parquetWriteFile({
      filename: numbers,
      columnData: [
        { name: 'x', data: [1, 2, 3], type: 'INT32' },
        { name: 'y', data: [0.5, 1, 2], type: 'DOUBLE' },
      ],
    })
    const noText = await errorOf(countDatasetTokens(numbers))
    expect(noText).toMatchObject({
      kind: 'input',
      code: 'E_DATASET_NO_TEXT',
      details: { columns: ['x', 'y'] },
    })
    expect(noText.message).toContain('columns: x, y')

    const fake = join(dir, 'fake.parquet')
    writeFileSync(fake, '{"text": "I am JSON in disguise"}\n')
    const broken = await errorOf(countDatasetTokens(fake))
    expect(broken).toMatchObject({ code: 'E_DATASET_PARQUET', details: { file: fake } })
    expect(broken.suggestion).toMatch(/PAR1/)

    const whole = readFileSync(numbers)
    const truncated = join(dir, 'truncated.parquet')
    writeFileSync(truncated, whole.subarray(0, whole.length - 20))
    expect((await errorOf(countDatasetTokens(truncated))).code).toBe('E_DATASET_PARQUET')
  })
})
