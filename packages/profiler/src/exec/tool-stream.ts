import { type ChildProcess, spawn } from 'node:child_process'
import { BoundedLines } from '@rigfit/core'
import { MARKER_VARIABLE, ToolProcesses } from './process-tree.js'

export interface ToolStreamEnd {
  code: number | null
  signal: NodeJS.Signals | null
  /** The tool could not be started (not installed). */
  notFound: boolean
  /** Why it could not be started, when it was not "not found". */
  spawnError: string | null
  /** The last characters the tool wrote on stderr. */
  stderrTail: string
}

export interface ToolStreamOptions {
  env?: NodeJS.ProcessEnv
  /** A line longer than this many characters is cut there; the rest of it, up to its newline, is dropped. */
  maxLineChars: number
  onLine: (line: string) => void
  onEnd: (end: ToolStreamEnd) => void
}

/** After the tool exited, how long a process it left behind may hold its pipes before they are closed. */
const EXIT_GRACE_MS = 200
const STDERR_TAIL_CHARS = 2000

/**
 * A long-running tool (a looping nvidia-smi) under the same discipline as every probe: its own process group
 * and a marker in its environment (see process-tree.ts), output read line by line with a bound on a line's
 * length, and a stop that never waits on the tool. `stop` closes our end of the pipes at once, sends SIGTERM
 * to the group and the processes found by the marker, and SIGKILL after the deadline to all of them.
 */
export class ToolStream {
  private child: ChildProcess | null = null
  private readonly processes = new ToolProcesses()
  private stopping: Promise<void> | null = null
  private exited = false
  private ended = false
  private stderrTail = ''
  private notFound = false
  private spawnError: string | null = null

  constructor(
    private readonly command: string,
    private readonly args: string[],
    private readonly options: ToolStreamOptions,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): void {
    const child = spawn(this.command, this.args, {
      env: { ...(this.options.env ?? process.env), [MARKER_VARIABLE]: this.processes.marker },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own group: a Ctrl-C meant for the monitor must not reach the tool, and a stop reaches its helpers.
      detached: process.platform !== 'win32',
      windowsHide: true,
    })
    this.child = child
    this.processes.watch(child.pid)
    const lines = new BoundedLines(this.options.maxLineChars, (line) => {
      if (this.stopping === null) this.options.onLine(line)
    })
    child.stdout?.setEncoding('utf8')
    child.stdout?.on('data', (chunk: string) => lines.push(chunk))
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS)
    })
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') this.notFound = true
      else this.spawnError = error.code ?? error.message
      if (child.pid === undefined) this.finish(null, null)
    })
    child.on('exit', (code, signal) => {
      this.exited = true
      this.processes.leaderExited()
      // Helpers the tool left behind would hold the pipes open: end them, then stop listening shortly after.
      if (process.platform !== 'win32') this.processes.end()
      setTimeout(() => {
        this.closePipes()
        lines.flush()
        this.finish(code, signal)
      }, EXIT_GRACE_MS).unref()
    })
    child.on('close', (code, signal) => {
      lines.flush()
      this.finish(code, signal)
    })
  }

  /**
   * Ends the tool and everything it started: SIGTERM now, SIGKILL after `graceMs`. Resolves once SIGKILL was
   * sent or the tool exited, whichever is first; never later than `graceMs` (and a scan of /proc).
   */
  stop(graceMs: number): Promise<void> {
    if (this.stopping !== null) return this.stopping
    const child = this.child
    this.closePipes()
    if (child?.pid === undefined || this.exited) {
      if (child?.pid !== undefined) this.processes.end()
      this.stopping = Promise.resolve()
      return this.stopping
    }
    this.processes.signal('SIGTERM')
    this.stopping = new Promise<void>((resolve) => {
      const kill = () => {
        clearTimeout(timer)
        // The leader may be gone while a helper that ignores SIGTERM lives on: the marker finds it.
        this.processes.end()
        resolve()
      }
      const timer = setTimeout(kill, graceMs)
      child.once('exit', kill)
    })
    return this.stopping
  }

  private closePipes(): void {
    this.child?.stdout?.destroy()
    this.child?.stderr?.destroy()
  }

  private finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.ended) return
    this.ended = true
    if (this.stopping !== null) return
    this.options.onEnd({
      code,
      signal,
      notFound: this.notFound,
      spawnError: this.spawnError,
      stderrTail: this.stderrTail,
    })
  }
}
