import { spawn } from 'node:child_process'

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
}

const DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024

/**
 * Runs a tool asynchronously and never rejects. The child gets its own process group so that a timeout kills
 * it together with anything it started (a wrapper script's `sleep`, a driver helper); the promise settles at
 * the deadline even when some grandchild keeps the pipes open.
 */
export function runTool(command: string, args: string[], options: RunToolOptions): Promise<ToolResult> {
  const started = performance.now()
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT
  return new Promise((resolve) => {
    let settled = false
    const out: Buffer[] = []
    const err: Buffer[] = []
    let outBytes = 0
    let errBytes = 0
    let timer: NodeJS.Timeout | undefined
    const finish = (fields: Pick<ToolResult, 'exitCode' | 'signal' | 'timedOut' | 'error'>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      const stdout = Buffer.concat(out).toString('utf8')
      const stderr = Buffer.concat(err).toString('utf8')
      const ok = fields.error === null && fields.exitCode === 0
      resolve({ command, args, ok, stdout, stderr, ms: performance.now() - started, ...fields })
    }

    let child: ReturnType<typeof spawn>
    try {
      child = spawn(command, args, {
        env: options.env ?? process.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: process.platform !== 'win32',
        windowsHide: true,
      })
    } catch (error) {
      finish({ exitCode: null, signal: null, timedOut: false, error: describeSpawnError(error) })
      return
    }

    timer = setTimeout(() => {
      killTree(child.pid)
      child.stdout?.destroy()
      child.stderr?.destroy()
      finish({
        exitCode: null,
        signal: 'SIGKILL',
        timedOut: true,
        error: `timed out after ${options.timeoutMs} ms`,
      })
    }, options.timeoutMs)

    child.stdout?.on('data', (chunk: Buffer) => {
      if (outBytes < maxBytes) out.push(chunk)
      outBytes += chunk.length
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      if (errBytes < maxBytes) err.push(chunk)
      errBytes += chunk.length
    })
    child.on('error', (error) => {
      finish({ exitCode: null, signal: null, timedOut: false, error: describeSpawnError(error) })
    })
    child.on('close', (code, signal) => {
      const detail = Buffer.concat(err).toString('utf8').trim().split('\n')[0] ?? ''
      const error =
        code === 0
          ? null
          : code === null
            ? `killed by ${signal ?? 'a signal'}`
            : `exit code ${code}${detail ? `: ${detail.slice(0, 200)}` : ''}`
      finish({ exitCode: code, signal: signal ?? null, timedOut: false, error })
    })
  })
}

function describeSpawnError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ENOENT') return 'not found'
  if (code === 'EACCES') return 'not executable (permission denied)'
  return error instanceof Error ? error.message : String(error)
}

/** Kills the child's whole process group (POSIX) or tree (Windows); a process already gone is fine. */
function killTree(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    if (process.platform === 'win32') {
      spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on(
        'error',
        () => {},
      )
    } else {
      process.kill(-pid, 'SIGKILL')
    }
  } catch {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already exited
    }
  }
}
