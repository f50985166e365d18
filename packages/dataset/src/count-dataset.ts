import { stat } from 'node:fs/promises'
import { extname } from 'node:path'
import { RigfitError } from '@rigfit/core'
import { countJsonl, countTxt, type FormatCount } from './count-text-files.js'
import { datasetError, reasonOf } from './dataset-error.js'
import type { ReadOptions } from './read-text.js'
import { bytesPerTokenTally, type TokenTally, tokenizerTally } from './token-tally.js'

export type DatasetFormat = 'jsonl' | 'txt' | 'parquet'

export interface CountDatasetOptions extends ReadOptions {
  /** A Hugging Face tokenizer.json (see `findTokenizer`); without one, tokens are estimated from bytes. */
  tokenizer?: string | null | undefined
}

export interface DatasetCount {
  /** Tokens of the text (special tokens such as BOS/EOS left out). */
  tokens: number
  /** Training examples: JSONL rows, parquet rows with text, lines with text in a .txt. */
  examples: number
  /** The file's size on disk. */
  bytes: number
  method: 'tokenizer' | 'bytes-per-token'
  /** The tokenizer.json counted with, or null. */
  tokenizer: string | null
  /** The ratio used when no tokenizer was given, or null. */
  bytesPerToken: number | null
  format: DatasetFormat
  /** The layouts or columns the text was read from, e.g. `["messages[].content"]`. */
  fields: string[]
  /** What the count cannot vouch for, in words: a .txt that is mostly not text. */
  warnings: string[]
}

/** Above this share of characters that are not text, a .txt is likely binary and its count meaningless. */
const NOT_TEXT_SHARE = 0.01

function textWarnings(path: string, counted: FormatCount): string[] {
  const characters = counted.characters
  if (characters === undefined || characters.total === 0) return []
  const share = characters.notText / characters.total
  if (share <= NOT_TEXT_SHARE) return []
  return [
    `${path}: ${(share * 100).toFixed(1)}% of its characters are not text (invalid UTF-8 or control characters); it looks like a binary file, and its token count means little`,
  ]
}

const FORMATS: Record<string, DatasetFormat> = {
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.txt': 'txt',
  '.parquet': 'parquet',
}

const COUNTERS: Record<
  DatasetFormat,
  (path: string, totalBytes: number, tally: TokenTally, options: ReadOptions) => Promise<FormatCount>
> = {
  jsonl: countJsonl,
  txt: countTxt,
  // The parquet reader and its decompressors (a few MiB of heap) load only when a parquet file is counted.
  parquet: async (...args) => (await import('./count-parquet.js')).countParquet(...args),
}

/** The format a file's extension names, or an input error naming the formats read. */
export function datasetFormatOf(path: string): DatasetFormat {
  const extension = extname(path).toLowerCase()
  const format = FORMATS[extension]
  if (format === undefined) {
    throw datasetError(
      'E_DATASET_FORMAT',
      `${path}: cannot count a ${extension || 'file without an extension'}; the formats read are .jsonl, .txt and .parquet`,
      'Convert the dataset to JSON Lines (one {"text": ...} object per line), or give its size with --dataset-tokens N.',
      { file: path, extension },
    )
  }
  return format
}

async function fileSize(path: string): Promise<number> {
  let info: Awaited<ReturnType<typeof stat>>
  try {
    info = await stat(path)
  } catch (error) {
    throw datasetError(
      'E_DATASET_NOT_FOUND',
      `${path}: cannot read the dataset (${reasonOf(error)})`,
      'Check the path given to --dataset; it is read relative to the current folder.',
      { file: path },
      error,
    )
  }
  if (info.isDirectory()) {
    throw datasetError(
      'E_DATASET_NOT_FOUND',
      `${path}: is a folder, not a dataset file`,
      'Give one .jsonl, .txt or .parquet file; for a dataset split over many files, count each or give --dataset-tokens N.',
      { file: path },
    )
  }
  if (!info.isFile()) {
    // A FIFO would block the count for ever and a device never ends: a dataset is counted from a regular file.
    const kind = info.isFIFO() ? 'a FIFO' : info.isSocket() ? 'a socket' : 'a device'
    throw new RigfitError('io', 'E_DATASET_NOT_REGULAR', `${path}: is ${kind}, not a regular file`, {
      suggestion: 'Save the dataset to a file first and give that file to --dataset.',
      details: { file: path },
    })
  }
  return info.size
}

/**
 * Counts the tokens and examples of a local dataset file, streaming it with bounded memory. With a tokenizer the
 * count is exact (up to the cuts in a very long .txt line); without one it is the UTF-8 bytes of the text at
 * `BYTES_PER_TOKEN`. Throws a `RigfitError` (kind `input`, code `E_DATASET_*`) for a file it cannot count, and
 * the signal's reason when aborted; kind `io` for a path that is not a regular file (a FIFO, a device).
 */
export async function countDatasetTokens(
  path: string,
  options: CountDatasetOptions = {},
): Promise<DatasetCount> {
  // What the path is (missing, a folder, a FIFO) is told before what its name says.
  const bytes = await fileSize(path)
  const format = datasetFormatOf(path)
  const tally = options.tokenizer ? await tokenizerTally(options.tokenizer) : bytesPerTokenTally()
  options.signal?.throwIfAborted()
  const counted = await COUNTERS[format](path, bytes, tally, options)
  const tokens = tally.tokens()
  if (counted.examples === 0 || tokens === 0) {
    throw datasetError(
      'E_DATASET_EMPTY',
      `${path}: holds no text to count (${counted.examples} examples, ${tokens} tokens)`,
      'Check that this is the training file; an empty dataset cannot be planned for.',
      { file: path },
    )
  }
  return {
    tokens,
    examples: counted.examples,
    bytes,
    method: tally.method,
    tokenizer: tally.tokenizer,
    bytesPerToken: tally.bytesPerToken,
    format,
    fields: counted.fields,
    warnings: textWarnings(path, counted),
  }
}
