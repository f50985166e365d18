import { readdirSync, readFileSync } from 'node:fs'
import { parseValidationRow } from '../estimate/validation.js'
import type { ValidationRow } from '../schemas/index.js'

/** Core's validation dataset: every line of every `*.jsonl` in `validation/`, in file order, parsed. */
export const VALIDATION_DIR = new URL('../../validation/', import.meta.url)

/** Reads the rows of every `*.jsonl` file of a folder (sorted by name), naming file and line on a bad one. */
export function loadValidationRows(dir: URL = VALIDATION_DIR): ValidationRow[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.jsonl'))
    .sort()
    .flatMap((file) =>
      readFileSync(new URL(file, dir), 'utf8')
        .split('\n')
        .map((line, index) => ({ line, where: `${file}:${index + 1}` }))
        .filter(({ line }) => line.trim() !== '')
        .map(({ line, where }) => parseValidationRow(JSON.parse(line), where)),
    )
}
