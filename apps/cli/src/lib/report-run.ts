import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { type MonitorRecord, RigfitError } from '@rigfit/core'
import type { RunReport } from '@rigfit/report'

const SUGGESTION =
  'Pass the --log-dir of a `rigfit monitor` run (by default rigfit-runs/<time>/), the folder that holds monitor.jsonl.'

async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new RigfitError(
      'input',
      'E_RUN_READ',
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`,
      {
        suggestion: SUGGESTION,
      },
    )
  }
}

/** The records of a monitored run: its monitor.jsonl, after the rotated monitor.1.jsonl when the log was capped. */
export async function readRunReport(dir: string): Promise<RunReport> {
  const info = await stat(dir).catch(() => null)
  if (!info?.isDirectory()) {
    throw new RigfitError('input', 'E_RUN_NOT_FOUND', `--run ${dir} is not a folder`, {
      suggestion: SUGGESTION,
    })
  }
  const current = join(dir, 'monitor.jsonl')
  const text = await readIfPresent(current)
  if (text === null) {
    throw new RigfitError('input', 'E_RUN_NO_LOG', `${dir} has no monitor.jsonl`, { suggestion: SUGGESTION })
  }
  // @rigfit/report loads vega: only a report asked for pays for it.
  const { parseRunLog } = await import('@rigfit/report')
  const rotated = join(dir, 'monitor.1.jsonl')
  const older = await readIfPresent(rotated)
  const records: MonitorRecord[] = [
    ...(older === null ? [] : parseRunLog(older, rotated)),
    ...parseRunLog(text, current),
  ]
  if (records.length === 0) {
    throw new RigfitError('input', 'E_RUN_EMPTY', `${current} holds no records yet`, {
      suggestion: 'Wait until the monitor has started the run, then write the report again.',
    })
  }
  return { source: dir, records }
}
