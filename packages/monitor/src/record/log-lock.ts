import { closeSync, constants, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { RigfitError } from '@rigfit/core'
import { readProcessIdentity } from '../process/proc-table.js'
import { RUN_LOG_FILE } from './node-log.js'

/** The lock file of a log folder's run log: one monitor at a time writes there. */
export const LOCK_FILE = 'monitor.lock'

/**
 * The lock of one run log: `monitor.lock` for `monitor.jsonl`, `monitor-<node>.lock` for a node's log, so the
 * nodes of one multi-node job share the run folder while two monitors of one node never share a log.
 */
export function lockFileOf(logFile: string): string {
  return logFile.replace(/\.jsonl$/, '') + '.lock'
}

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0)
const MAX_LOCK_BYTES = 4096

interface LockOwner {
  pid: number
  host: string
  startedAt: string
  /** The process's start time in clock ticks (Linux), so that a reused pid is not taken for the owner. */
  startTicks: number | null
}

export interface LogLock {
  release(): void
}

function ownStartTicks(): number | null {
  return process.platform === 'linux' ? (readProcessIdentity('/proc', process.pid)?.startTime ?? null) : null
}

function readOwner(path: string): LockOwner | null {
  try {
    // Non-blocking and never through a link: a FIFO or link put in its place is not followed or waited on.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0))
    let text: string
    try {
      text = readFileSync(fd, 'utf8')
    } finally {
      closeSync(fd)
    }
    if (text.length > MAX_LOCK_BYTES) return null
    const owner = JSON.parse(text) as Partial<LockOwner>
    if (typeof owner.pid !== 'number' || typeof owner.host !== 'string') return null
    return {
      pid: owner.pid,
      host: owner.host,
      startedAt: String(owner.startedAt ?? '?'),
      startTicks: typeof owner.startTicks === 'number' ? owner.startTicks : null,
    }
  } catch {
    return null
  }
}

/** Whether the owner still runs: same host, the pid alive, and (on Linux) the same process, not a reused pid. */
function ownerAlive(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return true
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  if (process.platform !== 'linux' || owner.startTicks === null) return true
  const identity = readProcessIdentity('/proc', owner.pid)
  return identity !== null && identity.startTime === owner.startTicks && identity.state !== 'Z'
}

/**
 * Takes the log folder's `logFile` for this monitor: creates its lock (`monitor.lock` for `monitor.jsonl`; never
 * through a link) naming this process. A
 * lock whose owner still runs is an error even with --force, since replacing its log would lose its records;
 * a lock left by a monitor that died (SIGKILL, power loss) is taken over.
 */
export function lockLogDirectory(logDir: string, logFile = RUN_LOG_FILE): LogLock {
  const path = join(logDir, lockFileOf(logFile))
  const me: LockOwner = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    startTicks: ownStartTicks(),
  }
  for (let attempt = 0; attempt < 2; attempt += 1) {
    let fd: number
    try {
      fd = openSync(path, CREATE_FLAGS, 0o644)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'EEXIST') {
        throw new RigfitError(
          'io',
          'E_LOG_LOCK',
          `cannot create ${path}: ${code ?? (error as Error).message}`,
          {
            suggestion: 'Check that --log-dir is writable.',
          },
        )
      }
      const owner = readOwner(path)
      if (owner !== null && ownerAlive(owner)) {
        throw new RigfitError(
          'exists',
          'E_LOG_LOCKED',
          `${logDir} is in use by another rigfit monitor (pid ${owner.pid} on ${owner.host}, started ${owner.startedAt})`,
          {
            suggestion:
              'Give this run its own --log-dir; --force replaces an old log, never the log of a running monitor.',
          },
        )
      }
      // Its owner is gone: the lock is stale.
      try {
        unlinkSync(path)
      } catch {
        // another monitor took it over first; the next try tells
      }
      continue
    }
    try {
      writeSync(fd, JSON.stringify(me))
    } finally {
      closeSync(fd)
    }
    return {
      release: () => {
        if (readOwner(path)?.pid !== me.pid) return
        try {
          unlinkSync(path)
        } catch {
          // already gone
        }
      },
    }
  }
  throw new RigfitError('exists', 'E_LOG_LOCKED', `${logDir} is being taken by another rigfit monitor`, {
    suggestion: 'Give this run its own --log-dir.',
  })
}
