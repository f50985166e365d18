import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'

/** A fresh temp folder per call, removed after the test. */
const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rigfit-dataset-'))
  made.push(dir)
  return dir
}

/** The words of the test tokenizer's vocabulary: each is exactly one token. */
export const WORDS = [
  'the',
  'model',
  'fits',
  'on',
  'one',
  'gpu',
  'tokens',
  'train',
  'batch',
  'step',
  'rigfit',
  'data',
]

const UNKNOWN = '[UNK]'

/**
 * A WordLevel tokenizer.json in the Hugging Face format, written by hand: whitespace pre-tokenizer (runs of word
 * characters, and runs of other non-space characters), one id per known word, [UNK] for the rest. Its token count
 * of a text is the number of such runs, which a test can work out on its own.
 */
export function wordLevelTokenizer(): object {
  const vocab = Object.fromEntries([UNKNOWN, ...WORDS].map((word, id) => [word, id]))
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      {
        id: 0,
        content: UNKNOWN,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      },
    ],
    normalizer: null,
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: null,
    decoder: null,
    model: { type: 'WordLevel', vocab, unk_token: UNKNOWN },
  }
}

/** A BPE tokenizer.json with two merges: `a b` -> `ab`, `ab ab` -> `abab`. */
export function tinyBpeTokenizer(): object {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: null,
    decoder: null,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab: { a: 0, b: 1, ab: 2, abab: 3 },
      merges: ['a b', 'ab ab'],
    },
  }
}

export function writeJson(path: string, value: unknown): string {
  writeFileSync(path, JSON.stringify(value))
  return path
}

/** Writes the word-level tokenizer into `dir` and returns its path. */
export function writeWordTokenizer(dir: string): string {
  return writeJson(join(dir, 'tokenizer.json'), wordLevelTokenizer())
}

/** Tokens of a text under the word-level tokenizer, counted without it. */
export function expectedWordTokens(text: string): number {
  return text.match(/\w+|[^\w\s]+/g)?.length ?? 0
}

export function writeJsonl(path: string, rows: unknown[]): string {
  writeFileSync(path, rows.map((row) => `${JSON.stringify(row)}\n`).join(''))
  return path
}
