import { datasetError, reasonOf } from './dataset-error.js'
import { fileLines, filePieces, LineTooLongError, type ReadOptions } from './read-text.js'
import { isRecord, recordText, TEXT_LAYOUTS } from './record-text.js'
import type { TokenTally } from './token-tally.js'

/** What a format's counter found, before the shared totals are attached. */
export interface FormatCount {
  examples: number
  /** The layouts (or parquet columns) the text came from, in the order first met. */
  fields: string[]
  /** A .txt's characters, and how many of them are not text (invalid UTF-8, control characters). */
  characters?: { total: number; notText: number }
}

// The replacement character (what invalid UTF-8 decodes to) and the C0 controls but tab, newline and CR.
// biome-ignore lint/suspicious/noControlCharactersInRegex: counting control characters is the point
const NOT_TEXT = /[\uFFFD\u0000-\u0008\u000B\u000C\u000E-\u001F]/g

/** The longest JSONL line read: far above any real example, well below V8's largest string. */
const MAX_JSONL_LINE_CHARS = 256 * 2 ** 20
/** A .txt is tokenized in pieces of about this many characters, cut at line breaks. */
const TXT_PIECE_CHARS = 1 << 20

/** A JSON Lines file: one example per non-blank line, its text chosen by the layouts of record-text.ts. */
export async function countJsonl(
  path: string,
  totalBytes: number,
  tally: TokenTally,
  options: ReadOptions,
): Promise<FormatCount> {
  const fields = new Set<string>()
  let examples = 0
  try {
    for await (const { text, line } of fileLines(path, totalBytes, options, MAX_JSONL_LINE_CHARS)) {
      if (text.trim() === '') continue
      let row: unknown
      try {
        row = JSON.parse(text)
      } catch (error) {
        throw datasetError(
          'E_DATASET_JSONL',
          `${path}:${line}: not valid JSON (${reasonOf(error)})`,
          'Each line of a .jsonl file must be one complete JSON object; fix or remove that line.',
          { file: path, line },
        )
      }
      if (!isRecord(row)) {
        throw datasetError(
          'E_DATASET_JSONL',
          `${path}:${line}: a JSON ${Array.isArray(row) ? 'array' : typeof row} where an object was expected`,
          'Each line of a .jsonl file must be one JSON object, e.g. {"text": "..."}.',
          { file: path, line },
        )
      }
      const found = recordText(row)
      if (found === null) {
        const keys = Object.keys(row).slice(0, 8).join(', ') || 'no fields'
        throw datasetError(
          'E_DATASET_NO_TEXT',
          `${path}:${line}: no text field to count (the row has ${keys})`,
          `Rows must hold one of: ${TEXT_LAYOUTS.join('; ')}. Rename the text field, or give --dataset-tokens N instead.`,
          { file: path, line, keys: Object.keys(row) },
        )
      }
      fields.add(found.layout)
      for (const piece of found.texts) tally.add(piece)
      examples += 1
    }
  } catch (error) {
    if (error instanceof LineTooLongError) {
      throw datasetError(
        'E_DATASET_JSONL',
        `${path}:${error.line}: the line is longer than 256 MiB`,
        'Is this really JSON Lines (one example per line)? A single JSON document belongs in a .json converted to .jsonl.',
        { file: path, line: error.line },
      )
    }
    throw error
  }
  return { examples, fields: [...fields] }
}

/** A plain text file: all of its text counts; an example is a line with text on it. */
export async function countTxt(
  path: string,
  totalBytes: number,
  tally: TokenTally,
  options: ReadOptions,
): Promise<FormatCount> {
  let examples = 0
  let lineHasText = false
  const characters = { total: 0, notText: 0 }
  for await (const piece of filePieces(path, totalBytes, options, TXT_PIECE_CHARS)) {
    tally.add(piece)
    characters.total += piece.length
    characters.notText += piece.match(NOT_TEXT)?.length ?? 0
    const segments = piece.split('\n')
    segments.forEach((segment, index) => {
      if (!lineHasText && /\S/.test(segment)) lineHasText = true
      const endsLine = index < segments.length - 1
      if (endsLine) {
        if (lineHasText) examples += 1
        lineHasText = false
      }
    })
  }
  if (lineHasText) examples += 1
  return { examples, fields: ['text'], characters }
}
