import { RigfitError } from '@rigfit/core'

/** The codes a user's dataset or tokenizer file can raise; every one is an `input` error (exit code 3). */
export type DatasetErrorCode =
  | 'E_DATASET_NOT_FOUND'
  | 'E_DATASET_FORMAT'
  | 'E_DATASET_JSONL'
  | 'E_DATASET_NO_TEXT'
  | 'E_DATASET_EMPTY'
  | 'E_DATASET_PARQUET'
  | 'E_DATASET_TOKENIZER'

export function datasetError(
  code: DatasetErrorCode,
  message: string,
  suggestion: string,
  details?: Record<string, unknown>,
  cause?: unknown,
): RigfitError {
  return new RigfitError('input', code, message, { suggestion, details, cause })
}

/** The message of anything thrown, for wrapping a library's error into one that names the user's file. */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
