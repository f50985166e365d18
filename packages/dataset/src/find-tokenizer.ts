import { dirname, join } from 'node:path'

export interface TokenizerSources {
  /** `--tokenizer`: a tokenizer.json, or a model folder holding one. */
  tokenizer?: string | undefined
  /** `--model`: a catalog id or a config.json path; a tokenizer.json beside that config.json is used. */
  model?: string | undefined
}

/**
 * The tokenizer.json to count with, or null to count at the bytes-per-token ratio. An explicit `--tokenizer`
 * wins and is returned even when missing, so that loading it names the user's typo instead of silently falling
 * back; the one beside `--model config.json` is taken only when it exists. Pure: the caller says which files
 * exist.
 */
export function findTokenizer(
  sources: TokenizerSources,
  fileExists: (path: string) => boolean,
): string | null {
  const explicit = sources.tokenizer?.trim()
  if (explicit) return explicit.endsWith('.json') ? explicit : join(explicit, 'tokenizer.json')
  const model = sources.model?.trim()
  if (!model?.endsWith('.json')) return null
  const beside = join(dirname(model), 'tokenizer.json')
  return fileExists(beside) ? beside : null
}
