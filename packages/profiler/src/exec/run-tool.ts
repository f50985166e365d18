import { type ChildProcess, spawn } from 'node:child_process'
import type { Readable } from 'node:stream'
import { MARKER_VARIABLE, ToolProcesses } from './process-tree.js'

export interface ToolResult {
  command: string
  args: string[]
  /** Exited with code 0 within the time limit. */
  ok: boolean
  exitCode: number | null
  signal: string | null
  stdout: string
  stderr: string
  ms: number
  timedOut: boolean
  /** Why it did not work, in words: "not found", "timed out after 2000 ms", "exit code 2: ...". */
  error: string | null
}

export interface RunToolOptions {
  timeoutMs: number
  env?: NodeJS.ProcessEnv
  /** Output beyond this many bytes per stream is dropped (a tool gone mad must not eat memory). */
  maxOutputBytes?: number
  /** Aborting ends the tool and every process it started at once; the result says "stopped". */
  signal?: AbortSignal
}

const DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024

/**
 * How long output may still arrive after the tool itself exited. Anything the tool wrote is already in the
 * pipe; a process it left behind (and that could not be found and ended) may hold the pipe open for good.
 */
const EXIT_GRACE_MS = 200
/** After an abort, how long the tool has between SIGTERM and SIGKILL. */
const ABORT_GRACE_MS = 1000

/**
 * Runs a tool asynchronously and never rejects. The tool runs in a process group of its own and with a marker
 * in its environment; when it exits or times out, every process it started is ended (see process-tree.ts).
 * The result is the tool's own: exit code 0 with its output is a success even when a process it left behind
 * held the pipe open, and the promise settles at the deadline whatever happens.
 */
export function runTool(command: string, args: string[], options: RunToolOptions): Promise<ToolResult> {
  const started = performance.now()
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT
  const processes = new ToolProcesses()
  return new Promise((resolve) => {
    let settled = false
    let timer: NodeJS.Timeout | undefined
    let grace: NodeJS.Timeout | undefined
    let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null
    let child: ChildProcess | undefined
    let output: { stdout: Collected; stderr: Collected } | undefined
    let abort = () => {}
    const finish = (fields: Pick<ToolResult, 'exitCode' | 'signal' | 'timedOut' | 'error'>) => {
      if (settled) return
      settled = true
      processes.leaderExited()
      options.signal?.removeEventListener('abort', abort)
      clearTimeout(timer)
      clearTimeout(grace)
      // Processes were ended where the tool exited or timed out; what is left is only our end of the pipes.
      child?.stdout?.destroy()
      child?.stderr?.destroy()
      const stdout = output?.stdout.text() ?? ''
      const stderr = output?.stderr.text() ?? ''
      const ok = fields.error === null && fields.exitCode === 0
      resolve({ command, args, ok, stdout, stderr, ms: performance.now() - started, ...fields })
    }
    const finishExited = (code: number | null, signal: NodeJS.Signals | null) =>
      finish(exitFields(code, signal, output?.stderr.text() ?? ''))

    try {
      child = spawnInGroup(command, args, options.env, processes.marker)
    } catch (error) {
      finish({ exitCode: null, signal: null, timedOut: false, error: describeSpawnError(error) })
      return
    }
    const running = child
    processes.watch(running.pid)
    timer = setTimeout(() => {
      if (exited) return finishExited(exited.code, exited.signal)
      endTree(processes, running.pid)
      finish({
        exitCode: null,
        signal: 'SIGKILL',
        timedOut: true,
        error: `timed out after ${options.timeoutMs} ms`,
      })
    }, options.timeoutMs)
    abort = () => {
      stopTree(processes, running.pid)
      finish({ exitCode: null, signal: 'SIGKILL', timedOut: false, error: 'stopped' })
    }
    if (options.signal?.aborted) abort()
    options.signal?.addEventListener('abort', abort, { once: true })

    output = { stdout: collect(running.stdout, maxBytes), stderr: collect(running.stderr, maxBytes) }
    running.on('error', (error) => {
      finish({ exitCode: null, signal: null, timedOut: false, error: describeSpawnError(error) })
    })
    running.on('exit', (code, signal) => {
      exited = { code, signal }
      // Processes the tool left behind would keep the pipes open: ending them lets 'close' come at once.
      processes.leaderExited()
      if (process.platform !== 'win32') processes.end()
      grace = setTimeout(() => finishExited(code, signal), EXIT_GRACE_MS)
    })
    running.on('close', (code, signal) => finishExited(code, signal))
  })
}

/** The tool in a process group of its own (not on Windows), marked in its environment so its tree can be found. */
function spawnInGroup(command: string, args: string[], env: NodeJS.ProcessEnv | undefined, marker: string) {
  return spawn(command, args, {
    env: { ...(env ?? process.env), [MARKER_VARIABLE]: marker },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: process.platform !== 'win32',
    windowsHide: true,
  })
}

/** What a tool wrote to one stream, up to a limit. */
interface Collected {
  text: () => string
}

function collect(stream: Readable | null, maxBytes: number): Collected {
  const chunks: Buffer[] = []
  let bytes = 0
  stream?.on('data', (chunk: Buffer) => {
    if (bytes < maxBytes) chunks.push(chunk)
    bytes += chunk.length
  })
  return { text: () => Buffer.concat(chunks).toString('utf8') }
}

/** The result of a tool that exited: a non-zero code says why with the first line of its stderr. */
function exitFields(
  code: number | null,
  signal: NodeJS.Signals | null,
  stderr: string,
): Pick<ToolResult, 'exitCode' | 'signal' | 'timedOut' | 'error'> {
  const detail = stderr.trim().split('\n')[0] ?? ''
  const error =
    code === 0
      ? null
      : code === null
        ? `killed by ${signal ?? 'a signal'}`
        : `exit code ${code}${detail ? `: ${detail.slice(0, 200)}` : ''}`
  return { exitCode: code, signal: signal ?? null, timedOut: false, error }
}

/** Ends the tool's tree at once. While the tool is alive its descendants are still linked to it: by parent links too. */
function endTree(processes: ToolProcesses, pid: number | undefined): void {
  if (process.platform === 'win32') killWindowsTree(pid)
  else processes.end()
}

/** SIGTERM now, SIGKILL after the grace period to whatever is left; the caller does not wait for it. */
function stopTree(processes: ToolProcesses, pid: number | undefined): void {
  if (process.platform === 'win32') killWindowsTree(pid)
  else {
    processes.signal('SIGTERM')
    setTimeout(() => processes.end(), ABORT_GRACE_MS)
  }
}

function describeSpawnError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ENOENT') return 'not found'
  if (code === 'EACCES') return 'not executable (permission denied)'
  return error instanceof Error ? error.message : String(error)
}

/** Windows has no process groups to signal: taskkill ends the tree. A process already gone is fine. */
function killWindowsTree(pid: number | undefined): void {
  if (pid === undefined) return
  spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on(
    'error',
    () => {},
  )
}
