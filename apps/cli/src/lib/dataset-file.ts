import { existsSync } from 'node:fs'
import { type DatasetFile, printableLine } from '@rigfit/core'
import { countDatasetTokens, findTokenizer, progressBar } from '@rigfit/dataset'

/** Files at least this large show a progress bar on stderr while they are counted; smaller ones count in a blink. */
const PROGRESS_FROM_BYTES = 64 * 2 ** 20

/**
 * Counts `--dataset PATH` for the plan: exactly with `--tokenizer`, or the tokenizer.json beside `--model
 * config.json`, else at the bytes-per-token ratio (the plan says which). Streams the file; a bar on stderr shows
 * the progress of a large one (stdout stays the plan, or its JSON).
 */
export async function countDatasetFile(
  path: string,
  sources: { tokenizer?: string | undefined; model?: string | undefined },
): Promise<DatasetFile> {
  const tokenizer = findTokenizer(sources, existsSync)
  const bar = progressBar(process.stderr, { label: `counting ${path}` })
  const count = await countDatasetTokens(path, {
    tokenizer,
    onProgress: (read, total) => {
      if (total >= PROGRESS_FROM_BYTES) bar.update(read, total)
    },
  })
  bar.done()
  // On stderr, so that --json keeps stdout for the plan alone.
  for (const warning of count.warnings) process.stderr.write(`Warning: ${printableLine(warning)}\n`)
  return {
    path,
    format: count.format,
    bytes: count.bytes,
    examples: count.examples,
    tokens: count.tokens,
    method: count.method,
    tokenizer: count.tokenizer,
  }
}
