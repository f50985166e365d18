import { MonitorRun } from './monitor-run.js'
import { type MonitorOptions, validateMonitorOptions } from './options.js'
import { prepareLogDirectory } from './record/log-directory.js'
import { lockLogDirectory } from './record/log-lock.js'
import { runLogFileName } from './record/node-log.js'
import type { MonitorResult } from './run/monitor-result.js'
import type { ViewIo } from './view/monitor-view.js'

/**
 * Supervises `options.command` until it finishes, is interrupted, or the monitor stops it; records everything
 * to `<logDir>/monitor.jsonl`. Resolves with the exit code to use; rejects with a RigfitError on bad options,
 * an unwritable, already used or locked (another monitor runs there: exit 8) log directory, or a command that cannot be started.
 */
export async function runMonitor(options: MonitorOptions, io: ViewIo = defaultIo()): Promise<MonitorResult> {
  validateMonitorOptions(options)
  prepareLogDirectory(options.logDir)
  // Before the log is opened: a second monitor must not replace (--force) the log of one that runs.
  const lock = lockLogDirectory(options.logDir, runLogFileName(options.node ?? null))
  try {
    return await new MonitorRun(options, io).execute()
  } finally {
    lock.release()
  }
}

function defaultIo(): ViewIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    color: process.stderr.isTTY === true && !process.env.NO_COLOR,
  }
}
