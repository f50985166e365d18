import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { CalibrationRecord, RigfitError } from '@rigfit/core'
import { temporaryPathFor } from '@rigfit/core/node'
import { withStoreLock } from './store-lock.js'

/** The calibration store: `calibration.jsonl` in rigfit's config folder ($XDG_CONFIG_HOME/rigfit, else ~/.config/rigfit). */
export function calibrationStorePath(configDir: string): string {
  return join(configDir, 'calibration.jsonl')
}

export interface StoreRead {
  records: CalibrationRecord[]
  /** Lines that are not records (a hand edit, another version's): skipped, each named. */
  skipped: string[]
}

/** The records of the store; a missing store is empty. A line that is not a record is skipped and named. */
export async function readCalibrationStore(path: string): Promise<StoreRead> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return { records: [], skipped: [] }
    throw new RigfitError(
      'io',
      'E_CALIBRATION_READ',
      `cannot read the calibration store ${path}: ${code ?? String(error)}`,
      {
        suggestion: 'Check its permissions, or pass --no-calibration to plan without it.',
      },
    )
  }
  const records: CalibrationRecord[] = []
  const skipped: string[] = []
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return
    let parsed: ReturnType<typeof CalibrationRecord.safeParse>
    try {
      parsed = CalibrationRecord.safeParse(JSON.parse(line))
    } catch {
      skipped.push(`${path}:${index + 1}: not JSON`)
      return
    }
    if (parsed.success) records.push(parsed.data)
    else
      skipped.push(
        `${path}:${index + 1}: ${parsed.error.issues[0]?.path.join('.') || 'record'}: ${parsed.error.issues[0]?.message}`,
      )
  })
  return { records, skipped }
}

/**
 * Appends one record, whole or not at all: under the store's lock, the store is rewritten to a temporary file
 * beside it with the new line and renamed over it, so a reader (or a crash) sees the old store or the new one.
 */
export async function appendCalibrationRecord(path: string, record: CalibrationRecord): Promise<void> {
  const line = `${JSON.stringify(CalibrationRecord.parse(record))}\n`
  await mkdir(dirname(path), { recursive: true })
  await withStoreLock(path, async () => {
    const before = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return ''
      throw error
    })
    const temporary = temporaryPathFor(path)
    try {
      await writeFile(temporary, `${before}${before === '' || before.endsWith('\n') ? '' : '\n'}${line}`, {
        flag: 'wx',
        mode: 0o644,
      })
      await rename(temporary, path)
    } finally {
      await rm(temporary, { force: true })
    }
  }).catch((error: NodeJS.ErrnoException) => {
    if (error instanceof RigfitError) throw error
    throw new RigfitError(
      'io',
      'E_CALIBRATION_WRITE',
      `cannot write the calibration store ${path}: ${error.code ?? error.message}; nothing was written`,
      {
        suggestion: 'Check the folder is writable and the disk has room (XDG_CONFIG_HOME moves the store).',
      },
    )
  })
}

/** Empties the store (under its lock); returns how many records it held. */
export async function clearCalibrationStore(path: string): Promise<number> {
  return withStoreLock(path, async () => {
    const { records, skipped } = await readCalibrationStore(path)
    await rm(path, { force: true })
    return records.length + skipped.length
  })
}
