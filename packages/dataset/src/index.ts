export {
  type CountDatasetOptions,
  countDatasetTokens,
  type DatasetCount,
  type DatasetFormat,
  datasetFormatOf,
} from './count-dataset.js'
export type { DatasetErrorCode } from './dataset-error.js'
export { findTokenizer, type TokenizerSources } from './find-tokenizer.js'
export {
  barLine,
  type ProgressBar,
  type ProgressBarOptions,
  type ProgressStream,
  progressBar,
  sizeText,
} from './progress-bar.js'
export { LEADING_TEXT_FIELDS, type RecordText, recordText, TEXT_FIELDS, TEXT_LAYOUTS } from './record-text.js'
export { BYTES_PER_TOKEN } from './token-tally.js'
