import { spawn } from 'node:child_process'
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
  const marker = processes.marker
  return new Promise((resolve) => {
    let settled = false
    const out: Buffer[] = []
    const err: Buffer[] = []
    let outBytes = 0
    let errBytes = 0
    let timer: NodeJS.Timeout | undefined
    let grace: NodeJS.Timeout | undefined
    let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null
    let child: ReturnType<typeof spawn> | undefined
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
      const stdout = Buffer.concat(out).toString('utf8')
      const stderr = Buffer.concat(err).toString('utf8')
      const ok = fields.error === null && fields.exitCode === 0
      resolve({ command, args, ok, stdout, stderr, ms: performance.now() - started, ...fields })
    }
    const finishExited = (code: number | null, signal: NodeJS.Signals | null) => {
      const detail = Buffer.concat(err).toString('utf8').trim().split('\n')[0] ?? ''
      const error =
        code === 0
          ? null
          : code === null
            ? `killed by ${signal ?? 'a signal'}`
            : `exit code ${code}${detail ? `: ${detail.slice(0, 200)}` : ''}`
      finish({ exitCode: code, signal: signal ?? null, timedOut: false, error })
    }

    try {
      child = spawn(command, args, {
        env: { ...(options.env ?? process.env), [MARKER_VARIABLE]: marker },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: process.platform !== 'win32',
        windowsHide: true,
      })
    } catch (error) {
      finish({ exitCode: null, signal: null, timedOut: false, error: describeSpawnError(error) })
      return
    }
    const running = child
    processes.watch(running.pid)

    timer = setTimeout(() => {
      if (exited) {
        finishExited(exited.code, exited.signal)
        return
      }
      if (process.platform === 'win32') killWindowsTree(running.pid)
      // While the tool is alive its descendants are still linked to it: end them by parent links too.
      else processes.end()
      finish({
        exitCode: null,
        signal: 'SIGKILL',
        timedOut: true,
        error: `timed out after ${options.timeoutMs} ms`,
      })
    }, options.timeoutMs)

    abort = () => {
      if (process.platform === 'win32') killWindowsTree(running.pid)
      else {
        // SIGTERM now, SIGKILL after the grace period to whatever is left; the caller does not wait for it.
        processes.signal('SIGTERM')
        setTimeout(() => processes.end(), ABORT_GRACE_MS)
      }
      finish({ exitCode: null, signal: 'SIGKILL', timedOut: false, error: 'stopped' })
    }
    if (options.signal?.aborted) abort()
    options.signal?.addEventListener('abort', abort, { once: true })

    running.stdout?.on('data', (chunk: Buffer) => {
      if (outBytes < maxBytes) out.push(chunk)
      outBytes += chunk.length
    })
    running.stderr?.on('data', (chunk: Buffer) => {
      if (errBytes < maxBytes) err.push(chunk)
      errBytes += chunk.length
    })
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
