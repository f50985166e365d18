import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { countDatasetTokens } from '@rigfit/dataset'
import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

const WORD_TOKENIZER = fileURLToPath(new URL('./fixtures/word-tokenizer/tokenizer.json', import.meta.url))
const TINY_LLAMA = fileURLToPath(new URL('../../../examples/pytorch/tiny-llama.json', import.meta.url))

/** A chat dataset of `rows` examples whose turns are `words` words long (every word one token of the tokenizer). */
function chatDataset(dir: string, rows: number, words: number): string {
  const path = join(dir, 'train.jsonl')
  const turn = (n: number) =>
    Array.from({ length: words }, (_, i) => ['the', 'model', 'fits', 'data'][(i + n) % 4]).join(' ')
  const lines = Array.from({ length: rows }, (_, n) =>
    JSON.stringify({
      messages: [
        { role: 'user', content: turn(n) },
        { role: 'assistant', content: turn(n + 1) },
      ],
    }),
  )
  writeFileSync(path, `${lines.join('\n')}\n`)
  return path
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'rigfit-dataset-cli-'))

describe('plan --dataset counts a local file', () => {
  it('without a tokenizer: counted at the bytes-per-token ratio, one epoch planned, and examples never cut short', async () => {
    const file = chatDataset(tempDir(), 3000, 600)
    const counted = await countDatasetTokens(file)
    for (const mode of ['conservative', 'balanced', 'extreme']) {
      const plan = rigfitJson([
        'plan',
        '--gpu',
        'A100 80GB',
        '--model',
        'llama-3.2-1b',
        '--mode',
        mode,
        '--dataset',
        file,
      ])
      expect(plan.workload.dataset).toEqual({
        path: file,
        format: 'jsonl',
        bytes: counted.bytes,
        examples: 3000,
        tokens: counted.tokens,
        method: 'bytes-per-token',
        tokenizer: null,
      })
      expect(plan.workload.description).toMatch(
        /on train\.jsonl \(3,000 examples, .* tokens estimated at 4 bytes per token\)/,
      )
      // One pass over the data, in whole optimizer steps.
      expect(plan.tokens.binding, mode).toBe('dataset')
      const perStep = plan.settings.effectiveBatch * plan.settings.seq
      expect(plan.tokens.budget).toBeLessThanOrEqual(counted.tokens)
      expect(plan.tokens.budget).toBeGreaterThan(counted.tokens - perStep)
      // An example of ~1.6k tokens (by bytes) needs sequences of 2048 in every mode.
      expect(counted.tokens / 3000).toBeGreaterThan(1024)
      expect(plan.settings.seq, mode).toBeGreaterThanOrEqual(2048)
    }
    const twice = rigfitJson([
      'plan',
      '--gpu',
      'A100 80GB',
      '--model',
      'llama-3.2-1b',
      '--dataset',
      file,
      '--epochs',
      '2',
    ])
    expect(twice.tokens.budget).toBeGreaterThan(counted.tokens * 1.9)
  })

  it('with the tokenizer.json beside --model config.json, or given with --tokenizer, the count is exact', () => {
    const dir = tempDir()
    const config = join(dir, 'config.json')
    copyFileSync(TINY_LLAMA, config)
    copyFileSync(WORD_TOKENIZER, join(dir, 'tokenizer.json'))
    const file = chatDataset(dir, 200, 50)
    const beside = rigfitJson(['plan', '--gpu', 'RTX 4090', '--model', config, '--dataset', file])
    // 200 examples of two turns of 50 words, each word one token.
    expect(beside.workload.dataset).toMatchObject({
      method: 'tokenizer',
      tokens: 200 * 2 * 50,
      examples: 200,
    })
    expect(beside.workload.dataset.tokenizer).toBe(join(dir, 'tokenizer.json'))
    const explicit = rigfitJson([
      'plan',
      '--gpu',
      'RTX 4090',
      '--model',
      'llama-3.2-1b',
      '--dataset',
      file,
      '--tokenizer',
      WORD_TOKENIZER,
    ])
    expect(explicit.workload.dataset).toMatchObject({
      method: 'tokenizer',
      tokens: 20_000,
      tokenizer: WORD_TOKENIZER,
    })
    expect(explicit.workload.description).toMatch(/20K tokens by its tokenizer\.json/)
  })

  it('refuses what it cannot count, naming the file, and flags that say the dataset twice', () => {
    const dir = tempDir()
    const missing = rigfit([
      'plan',
      '--gpu',
      'RTX 4090',
      '--model',
      'gpt2',
      '--dataset',
      join(dir, 'nope.jsonl'),
      '--json',
    ])
    expect(missing.status).toBe(3)
    expect(JSON.parse(missing.stdout).error).toMatchObject({ code: 'E_DATASET_NOT_FOUND' })
    expect(JSON.parse(missing.stdout).error.message).toContain('nope.jsonl')

    const csv = join(dir, 'train.csv')
    writeFileSync(csv, 'text\nhello\n')
    const format = rigfit(['plan', '--gpu', 'RTX 4090', '--model', 'gpt2', '--dataset', csv])
    expect(format.status).toBe(3)
    expect(format.stderr).toMatch(/train\.csv.*\.jsonl, \.txt and \.parquet/)

    const broken = join(dir, 'broken.jsonl')
    writeFileSync(broken, '{"text": "the model"}\n{"text": \n')
    const jsonl = rigfit(['plan', '--gpu', 'RTX 4090', '--model', 'gpt2', '--dataset', broken])
    expect(jsonl.status).toBe(3)
    expect(jsonl.stderr).toMatch(/broken\.jsonl:2: not valid JSON/)

    const file = chatDataset(dir, 10, 10)
    for (const other of [
      ['--dataset-tokens', '1M'],
      ['--dataset-size', '1GB'],
      ['--examples', '10', '--tokens-per-example', '100'],
    ]) {
      const both = rigfit(['plan', '--gpu', 'RTX 4090', '--model', 'gpt2', '--dataset', file, ...other])
      expect(both.status, other.join(' ')).toBe(2)
      expect(both.stderr).toMatch(/--dataset/)
    }
    expect(
      rigfit(['plan', '--gpu', 'RTX 4090', '--model', 'gpt2', '--tokenizer', WORD_TOKENIZER]).status,
    ).toBe(2)
  })
})
