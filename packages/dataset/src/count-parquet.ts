import type { AsyncBuffer, FileMetaData, SchemaTree } from 'hyparquet'
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import type { FormatCount } from './count-text-files.js'
import { datasetError, reasonOf } from './dataset-error.js'
import type { ReadOptions } from './read-text.js'
import { LEADING_TEXT_FIELDS, recordText, TEXT_FIELDS, TEXT_LAYOUTS } from './record-text.js'
import type { TokenTally } from './token-tally.js'

/** A top-level column that holds UTF-8 strings (parquet's annotated BYTE_ARRAY). */
function isStringColumn(node: SchemaTree): boolean {
  const { element } = node
  if (node.children.length > 0 || element.type !== 'BYTE_ARRAY') return false
  return element.converted_type === 'UTF8' || element.logical_type?.type === 'STRING'
}

/** The parquet file's top-level columns by name. */
function topColumns(metadata: FileMetaData): SchemaTree[] {
  return parquetSchema(metadata).children
}

/** Compressed bytes of each row group: what reading it costs, and how far the progress bar moves. */
function rowGroupBytes(metadata: FileMetaData): number[] {
  return metadata.row_groups.map((group) =>
    group.columns.reduce((sum, chunk) => sum + Number(chunk.meta_data?.total_compressed_size ?? 0n), 0),
  )
}

async function openParquet(path: string): Promise<{ file: AsyncBuffer; metadata: FileMetaData }> {
  try {
    const file = await asyncBufferFromFile(path)
    return { file, metadata: await parquetMetadataAsync(file) }
  } catch (error) {
    throw datasetError(
      'E_DATASET_PARQUET',
      `${path}: not a readable parquet file (${reasonOf(error)})`,
      'Check that the file was copied whole (a parquet file ends with the bytes PAR1); re-export it from the dataset, or convert it to .jsonl.',
      { file: path },
      error,
    )
  }
}

/**
 * A parquet file, one row group at a time so that memory holds a single group of the text columns. When a column
 * named by a text layout is present (`text`, `messages`, `conversations`, `prompt`, `instruction`), rows are read
 * by the same layouts as JSONL and a row with none of them (nulls) is no example; otherwise every top-level
 * string column counts, and a row with any non-empty string is an example.
 */
export async function countParquet(
  path: string,
  totalBytes: number,
  tally: TokenTally,
  options: ReadOptions,
): Promise<FormatCount> {
  const { file, metadata } = await openParquet(path)
  const columns = topColumns(metadata)
  const names = columns.map((column) => column.element.name)
  const byLayout = names.some((name) => (LEADING_TEXT_FIELDS as readonly string[]).includes(name))
  const read = byLayout
    ? names.filter((name) => (TEXT_FIELDS as readonly string[]).includes(name))
    : columns.filter(isStringColumn).map((column) => column.element.name)
  if (read.length === 0) {
    throw datasetError(
      'E_DATASET_NO_TEXT',
      `${path}: no string column to count (columns: ${names.join(', ') || 'none'})`,
      `Give the text a string column, ideally one of: ${TEXT_LAYOUTS.join('; ')}; or give --dataset-tokens N instead.`,
      { file: path, columns: names },
    )
  }
  const fields = new Set<string>()
  let examples = 0
  let rowStart = 0
  let bytesRead = 0
  const groupBytes = rowGroupBytes(metadata)
  for (const [index, group] of metadata.row_groups.entries()) {
    options.signal?.throwIfAborted()
    const rowEnd = rowStart + Number(group.num_rows)
    let rows: Record<string, unknown>[]
    try {
      rows = await parquetReadObjects({ file, metadata, columns: read, rowStart, rowEnd, compressors })
    } catch (error) {
      throw datasetError(
        'E_DATASET_PARQUET',
        `${path}: row group ${index} (rows ${rowStart}-${rowEnd - 1}) cannot be read (${reasonOf(error)})`,
        'The file may be truncated or use an unsupported encoding; re-export it, or convert it to .jsonl.',
        { file: path, rowGroup: index },
        error,
      )
    }
    for (const row of rows) {
      if (byLayout) {
        const found = recordText(row)
        if (found === null) continue
        fields.add(found.layout)
        for (const text of found.texts) tally.add(text)
        examples += 1
        continue
      }
      let hasText = false
      for (const name of read) {
        const value = row[name]
        if (typeof value !== 'string' || value.length === 0) continue
        fields.add(name)
        tally.add(value)
        hasText = true
      }
      if (hasText) examples += 1
    }
    rowStart = rowEnd
    bytesRead = Math.min(totalBytes, bytesRead + (groupBytes[index] ?? 0))
    options.onProgress?.(bytesRead, totalBytes)
  }
  if (bytesRead !== totalBytes) options.onProgress?.(totalBytes, totalBytes)
  return { examples, fields: [...fields] }
}
