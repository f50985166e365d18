import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { countDatasetTokens } from '../src/count-dataset.js'
import { expectedWordTokens, tempDir, WORDS, writeWordTokenizer } from './helpers.js'

describe('countDatasetTokens on plain text', () => {
  it('counts the whole text exactly and each line with text as an example', async () => {
    const dir = tempDir()
    const tokenizer = writeWordTokenizer(dir)
    let file = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.constantFrom(...WORDS, '!', ' ', '\t'), { maxLength: 12 }), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.constantFrom('\n', '\r\n'),
        async (lines, lineBreak) => {
          const text = lines.map((parts) => parts.join(' ')).join(lineBreak)
          const tokens = expectedWordTokens(text)
          fc.pre(tokens > 0)
          const path = join(dir, `t-${file++}.txt`)
          writeFileSync(path, text)
          const count = await countDatasetTokens(path, { tokenizer })
          expect(count).toMatchObject({
            tokens,
            examples: text.split(/\r?\n/).filter((line) => /\S/.test(line)).length,
            format: 'txt',
            fields: ['text'],
          })
        },
      ),
      { numRuns: 40 },
    )
  })

  it('cuts a line of several MiB at spaces, so words are never split and the count stays exact', async () => {
    const dir = tempDir()
    const tokenizer = writeWordTokenizer(dir)
    // One line of ~5.5 MiB: longer than a read chunk and than a tokenized piece.
    const words = Array.from({ length: 1_000_000 }, (_, index) => WORDS[index % WORDS.length])
    const path = join(dir, 'one-line.txt')
    writeFileSync(path, words.join(' '))
    const count = await countDatasetTokens(path, { tokenizer })
    expect(count).toMatchObject({ tokens: words.length, examples: 1 })
  })

  it('estimates from bytes without a tokenizer, multi-byte characters included', async () => {
    const dir = tempDir()
    const path = join(dir, 'utf8.txt')
    const text = 'naïve café 😀\n学习率\n'
    writeFileSync(path, text)
    const count = await countDatasetTokens(path)
    expect(count).toMatchObject({
      tokens: Math.ceil(Buffer.byteLength(text) / 4),
      examples: 2,
      method: 'bytes-per-token',
      bytes: Buffer.byteLength(text),
    })
  })
})
