import { readdir, readFile, stat } from 'node:fs/promises'
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

/** The records of one log, after its rotated copy (`monitor.1.jsonl` before `monitor.jsonl`). */
async function readLog(dir: string, file: string): Promise<MonitorRecord[] | null> {
  const current = join(dir, file)
  const text = await readIfPresent(current)
  if (text === null) return null
  const { parseRunLog } = await import('@rigfit/report')
  const rotated = join(dir, file.replace(/\.jsonl$/, '.1.jsonl'))
  const older = await readIfPresent(rotated)
  return [...(older === null ? [] : parseRunLog(older, rotated)), ...parseRunLog(text, current)]
}

/**
 * The records of a monitored run: its monitor.jsonl, or, for a job over several nodes, every node's
 * monitor-<node>.jsonl, one report per node.
 */
export async function readRunReport(dir: string): Promise<RunReport | RunReport[]> {
  const info = await stat(dir).catch(() => null)
  if (!info?.isDirectory()) {
    throw new RigfitError('input', 'E_RUN_NOT_FOUND', `--run ${dir} is not a folder`, {
      suggestion: SUGGESTION,
    })
  }
  // The monitor's log names and @rigfit/report (which loads vega) load only when a run report is asked for.
  const { nodeRunLogs, RUN_LOG_FILE } = await import('@rigfit/monitor')
  const single = await readLog(dir, RUN_LOG_FILE)
  const perNode = single === null ? nodeRunLogs(await readdir(dir)) : []
  if (single === null && perNode.length === 0) {
    throw new RigfitError('input', 'E_RUN_NO_LOG', `${dir} has no monitor.jsonl (nor monitor-<node>.jsonl)`, {
      suggestion: SUGGESTION,
    })
  }
  const reports =
    single !== null
      ? [{ source: dir, records: single, node: null }]
      : await Promise.all(
          perNode.map(async ({ node, file }) => ({
            source: join(dir, file),
            records: (await readLog(dir, file)) ?? [],
            node,
          })),
        )
  const empty = reports.find((report) => report.records.length === 0)
  if (empty) {
    throw new RigfitError(
      'input',
      'E_RUN_EMPTY',
      `${empty.node ? join(dir, `monitor-${empty.node}.jsonl`) : join(dir, RUN_LOG_FILE)} holds no records yet`,
      {
        suggestion: 'Wait until the monitor has started the run, then write the report again.',
      },
    )
  }
  return single !== null ? (reports[0] as RunReport) : reports
}
