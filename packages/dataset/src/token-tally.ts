import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Tokenizer } from '@huggingface/tokenizers'
import { TEXT_BYTES_PER_TOKEN } from '@rigfit/core'
import { datasetError, reasonOf } from './dataset-error.js'

/** Bytes of UTF-8 text per token without a tokenizer: the planner's ratio for `--dataset-size`, so both agree. */
export const BYTES_PER_TOKEN = TEXT_BYTES_PER_TOKEN

/** Adds up the tokens of many texts, one method for the whole dataset. */
export interface TokenTally {
  readonly method: 'tokenizer' | 'bytes-per-token'
  /** The tokenizer.json counted with, or null for the ratio. */
  readonly tokenizer: string | null
  readonly bytesPerToken: number | null
  add(text: string): void
  /** Tokens of everything added so far. */
  tokens(): number
}

/** Tokens at the ratio, rounded up over the whole dataset, so that any text at all counts at least one. */
export function bytesPerTokenTally(): TokenTally {
  let bytes = 0
  return {
    method: 'bytes-per-token',
    tokenizer: null,
    bytesPerToken: BYTES_PER_TOKEN,
    add(text) {
      bytes += Buffer.byteLength(text, 'utf8')
    },
    tokens: () => Math.ceil(bytes / BYTES_PER_TOKEN),
  }
}

async function readJson(path: string, what: string): Promise<object> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw datasetError(
      'E_DATASET_TOKENIZER',
      `${path}: cannot read the ${what} (${reasonOf(error)})`,
      'Give the path of a Hugging Face tokenizer.json with --tokenizer, or leave it out to count at 4 bytes per token.',
      { file: path },
      error,
    )
  }
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new Error('not a JSON object')
    return value
  } catch (error) {
    throw datasetError(
      'E_DATASET_TOKENIZER',
      `${path}: the ${what} is not valid JSON (${reasonOf(error)})`,
      'Download the model files again; a tokenizer.json is one JSON object written by the tokenizers library.',
      { file: path },
      error,
    )
  }
}

/**
 * A tally that encodes with a Hugging Face tokenizer.json (and its tokenizer_config.json when one sits beside it).
 * Special tokens (BOS/EOS) are left out: they add the same one or two tokens to every example, not to the text.
 */
export async function tokenizerTally(path: string): Promise<TokenTally> {
  const json = await readJson(path, 'tokenizer')
  const configPath = join(dirname(path), 'tokenizer_config.json')
  // The config is optional; only one that exists and is broken is the user's to fix.
  const config = existsSync(configPath) ? await readJson(configPath, 'tokenizer config') : {}
  // Loaded on first use, so that a command that counts no tokens does not pay for the library.
  const { Tokenizer: HfTokenizer } = await import('@huggingface/tokenizers')
  let tokenizer: Tokenizer
  try {
    tokenizer = new HfTokenizer(json, config)
    tokenizer.encode('rigfit', { add_special_tokens: false })
  } catch (error) {
    throw datasetError(
      'E_DATASET_TOKENIZER',
      `${path}: not a usable Hugging Face tokenizer (${reasonOf(error)})`,
      'Use the tokenizer.json shipped with the model (it has "model", "pre_tokenizer" and "decoder" keys), or leave --tokenizer out to count at 4 bytes per token.',
      { file: path },
      error,
    )
  }
  let total = 0
  return {
    method: 'tokenizer',
    tokenizer: path,
    bytesPerToken: null,
    add(text) {
      if (text.length > 0) total += tokenizer.encode(text, { add_special_tokens: false }).ids.length
    },
    tokens: () => total,
  }
}
