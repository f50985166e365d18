import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import {
  isSameProcessAlive,
  listDescendants,
  listGroupMembers,
  listMarked,
  readProcessIdentity,
  readResidentBytes,
} from './proc-table.js'

/**
 * The variable that marks every process of one monitored run: descendants inherit it, so /proc finds them even
 * after they left the trainer's group and session (setsid) and their parent exited.
 */
export const RUN_MARKER_VARIABLE = 'RIGFIT_MONITOR_RUN'

export interface GroupExit {
  code: number | null
  signal: NodeJS.Signals | null
  /** Set when the command could not be started at all (not found, not executable). */
  spawnError: NodeJS.ErrnoException | null
}

export interface SpawnGroupOptions {
  cwd: string
  env: NodeJS.ProcessEnv
  procRoot: string
}

const POLL_MS = 25
/** Built beside this file; absent when the sources run untranspiled (unit tests), where no watchdog is started. */
const WATCHDOG_SCRIPT = fileURLToPath(new URL('./watchdog.js', import.meta.url))
const RESIDENT_CACHE_MS = 500

/**
 * The trainer and everything it starts. It runs in a process group of its own (detached), so a signal sent to
 * the group reaches the whole tree and the terminal's Ctrl-C reaches only the monitor, which decides. Children
 * that leave the group (setsid) are tracked through /proc while the tree is intact, so none is left behind.
 */
export class ProcessGroup {
  readonly child: ChildProcess
  readonly exited: Promise<GroupExit>
  /** Resolves when the child's stdout and stderr have closed (or right after a spawn error). */
  readonly closed: Promise<void>
  private hasExited = false
  private readonly tracked = new Map<number, number>()
  private terminating: Promise<void> | null = null
  private skipWait: (() => void) | null = null
  private resident: { atMs: number; bytes: number } | null = null
  private readonly marker = `${process.pid}-${randomUUID()}`
  /** The trainer's start time: processes older than it cannot be its descendants. */
  private readonly startTicks: number
  /** Ends the tree if the monitor dies first (see watchdog.ts); told `done` once the tree is reaped. */
  private watchdog: ChildProcess | null = null

  private constructor(
    command: string[],
    private readonly options: SpawnGroupOptions,
  ) {
    const [file, ...args] = command
    this.child = spawn(file as string, args, {
      cwd: options.cwd,
      env: { ...options.env, [RUN_MARKER_VARIABLE]: this.marker },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true,
    })
    this.startWatchdog()
    this.startTicks =
      process.platform === 'linux' && this.child.pid !== undefined
        ? (readProcessIdentity(options.procRoot, this.child.pid)?.startTime ?? 0)
        : 0
    this.exited = new Promise<GroupExit>((resolve) => {
      this.child.once('error', (error: NodeJS.ErrnoException) => {
        if (this.child.pid === undefined) {
          this.hasExited = true
          resolve({ code: null, signal: null, spawnError: error })
        }
      })
      this.child.once('exit', (code, signal) => {
        this.hasExited = true
        resolve({ code, signal, spawnError: null })
      })
    })
    this.closed = new Promise<void>((resolve) => {
      this.child.once('close', () => resolve())
      this.child.once('error', () => {
        if (this.child.pid === undefined) resolve()
      })
    })
  }

  /**
   * Starts the watchdog beside the trainer, in a group of its own. Its stdin pipe is unref'd: it never keeps the
   * monitor alive, and the kernel closes it when the monitor dies.
   */
  private startWatchdog(): void {
    const pid = this.child.pid
    if (pid === undefined || process.platform === 'win32' || !existsSync(WATCHDOG_SCRIPT)) return
    const dog = spawn(
      process.execPath,
      [WATCHDOG_SCRIPT, String(pid), `${RUN_MARKER_VARIABLE}=${this.marker}`],
      {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
        windowsHide: true,
      },
    )
    dog.on('error', () => {})
    dog.stdin?.on('error', () => {})
    dog.unref()
    ;(dog.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null)?.unref?.()
    this.watchdog = dog
  }

  /** The tree is reaped: the watchdog may go. */
  private releaseWatchdog(): void {
    this.watchdog?.stdin?.end('done\n')
    this.watchdog = null
  }

  static spawn(command: string[], options: SpawnGroupOptions): ProcessGroup {
    return new ProcessGroup(command, options)
  }

  get pid(): number | undefined {
    return this.child.pid
  }

  get exitedAlready(): boolean {
    return this.hasExited
  }

  /** Sends a signal to the whole group; a group that is already gone is not an error. */
  signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid
    if (pid === undefined) return
    try {
      if (process.platform === 'win32') this.child.kill(signal)
      else process.kill(-pid, signal)
    } catch {
      // ESRCH: nobody left in the group
    }
  }

  /**
   * Remembers the current descendants (with their start times): by parent links while the trainer lives, and
   * by the run's marker always, so that escapees are found even after the trainer exited.
   */
  trackDescendants(): void {
    const pid = this.child.pid
    if (pid === undefined || process.platform !== 'linux') return
    const found = this.hasExited ? [] : listDescendants(this.options.procRoot, pid)
    found.push(...listMarked(this.options.procRoot, RUN_MARKER_VARIABLE, this.marker, this.startTicks))
    for (const descendant of found) this.tracked.set(descendant.pid, descendant.startTime)
  }

  /**
   * Resident memory of the trainer's whole tree (the leader, its descendants and the escapees tracked so far),
   * the training processes' own memory rather than the machine's; null where /proc is not available.
   */
  residentBytes(): number | null {
    const pid = this.child.pid
    if (pid === undefined || process.platform !== 'linux' || this.hasExited) return null
    // Fast trainers print many steps a second; the tree is walked at most twice a second.
    if (this.resident !== null && Date.now() - this.resident.atMs < RESIDENT_CACHE_MS)
      return this.resident.bytes
    const members = new Set([pid, ...listDescendants(this.options.procRoot, pid).map((p) => p.pid)])
    for (const [member, startTime] of this.tracked)
      if (isSameProcessAlive(this.options.procRoot, member, startTime)) members.add(member)
    let total = 0
    for (const member of members) total += readResidentBytes(this.options.procRoot, member) ?? 0
    this.resident = { atMs: Date.now(), bytes: total }
    return total
  }

  /** Stops listening to the trainer's pipes: an orphan may hold them open long after the trainer exited. */
  detachOutput(): void {
    this.child.stdout?.destroy()
    this.child.stderr?.destroy()
  }

  /**
   * Stops the tree: `first` (SIGINT for Ctrl-C), then SIGTERM after the grace period, then SIGKILL. A stopped
   * (paused) group is continued after each signal so it can act on it. Calling it again while it runs skips the
   * current wait: the second Ctrl-C.
   */
  terminate(first: NodeJS.Signals, graceMs: number): Promise<void> {
    if (this.terminating !== null) {
      this.skipWait?.()
      return this.terminating
    }
    const steps: NodeJS.Signals[] =
      first === 'SIGKILL'
        ? ['SIGKILL']
        : first === 'SIGTERM'
          ? ['SIGTERM', 'SIGKILL']
          : [first, 'SIGTERM', 'SIGKILL']
    this.terminating = (async () => {
      for (const signal of steps) {
        if (this.hasExited) break
        this.trackDescendants()
        this.signalTree(signal)
        if (signal === 'SIGKILL') break
        this.signal('SIGCONT')
        const skipped = new Promise<void>((resolve) => {
          this.skipWait = resolve
        })
        await Promise.race([this.exited, delay(graceMs), skipped])
      }
      await this.exited
      await this.reap(graceMs)
    })()
    return this.terminating
  }

  /**
   * After the leader exited: whatever is left of its tree (dataloader workers, a daemon it started) gets
   * SIGTERM, then SIGKILL after the grace period. No orphans outlive the trainer.
   */
  async reap(graceMs: number): Promise<void> {
    try {
      this.trackDescendants()
      if (!this.anyAlive()) return
      this.signalTree('SIGTERM')
      this.signal('SIGCONT')
      if (await this.waitUntilGone(Math.min(graceMs, 5000))) return
      this.signalTree('SIGKILL')
      await this.waitUntilGone(2000)
    } finally {
      this.releaseWatchdog()
    }
  }

  private signalTree(signal: NodeJS.Signals): void {
    this.signal(signal)
    for (const [pid, startTime] of this.tracked) {
      if (!isSameProcessAlive(this.options.procRoot, pid, startTime)) {
        this.tracked.delete(pid)
        continue
      }
      try {
        process.kill(pid, signal)
      } catch {
        this.tracked.delete(pid)
      }
    }
  }

  /**
   * Whether anything of the tree is still running. On Linux the group's members are read from /proc, so
   * zombies waiting for init to reap them do not count; elsewhere a signal-0 probe of the group answers.
   */
  private anyAlive(): boolean {
    const pid = this.child.pid
    if (pid === undefined) return false
    if (process.platform === 'linux') this.trackDescendants()
    for (const [member, startTime] of this.tracked) {
      if (isSameProcessAlive(this.options.procRoot, member, startTime)) return true
    }
    if (process.platform === 'linux') return listGroupMembers(this.options.procRoot, pid).length > 0
    if (process.platform === 'win32') return false
    try {
      process.kill(-pid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM'
    }
  }

  private async waitUntilGone(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms
    while (Date.now() < deadline) {
      if (!this.anyAlive()) return true
      await delay(POLL_MS)
    }
    return !this.anyAlive()
  }
}
