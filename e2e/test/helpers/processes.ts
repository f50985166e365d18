import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { createServer } from 'node:net'

export interface Finished {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface RunOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** A deadline for the process to exit; past it the process group is killed and the run fails. */
  deadlineMs: number
}

/** A process started in its own process group, with its output collected as it comes. */
export class Started {
  readonly child: ChildProcess
  stdout = ''
  stderr = ''
  readonly exited: Promise<Finished>
  private readonly listeners = new Set<() => void>()

  constructor(command: string, args: string[], options: Omit<RunOptions, 'deadlineMs'>) {
    this.child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true, // its own group: a kill reaches every process it started
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child.stdout?.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString()
      this.notify()
    })
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString()
      this.notify()
    })
    this.exited = new Promise((resolve, reject) => {
      this.child.on('error', reject)
      this.child.on('close', (code, signal) => {
        this.notify()
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr })
      })
    })
  }

  private notify(): void {
    for (const listener of this.listeners) listener()
  }

  /** Resolves when `found` accepts the output so far (checked on every new chunk); rejects past the deadline. */
  waitForOutput<T>(what: string, found: (out: string) => T | undefined, deadlineMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = found(`${this.stdout}\n${this.stderr}`)
        if (value !== undefined) {
          done()
          resolve(value)
        } else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          done()
          reject(new Error(`exited before ${what}:\n${this.stdout}\n${this.stderr}`))
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`no ${what} within ${deadlineMs / 1000} s:\n${this.stdout}\n${this.stderr}`))
      }, deadlineMs)
      const done = () => {
        clearTimeout(timer)
        this.listeners.delete(check)
      }
      this.listeners.add(check)
      check()
    })
  }

  signalGroup(signal: NodeJS.Signals): void {
    if (this.child.pid !== undefined && this.child.exitCode === null && this.child.signalCode === null) {
      try {
        process.kill(-this.child.pid, signal)
      } catch {
        // the group is already gone
      }
    }
  }

  /** The exit, or a killed group and an error naming the command once the deadline passes. */
  async finish(deadlineMs: number, what: string): Promise<Finished> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.signalGroup('SIGKILL')
        reject(
          new Error(`${what} did not exit within ${deadlineMs / 1000} s:\n${this.stdout}\n${this.stderr}`),
        )
      }, deadlineMs)
    })
    try {
      return await Promise.race([this.exited, late])
    } finally {
      clearTimeout(timer)
    }
  }
}

/** Runs a command to its exit. */
export function run(command: string, args: string[], options: RunOptions): Promise<Finished> {
  return new Started(command, args, options).finish(options.deadlineMs, [command, ...args].join(' '))
}

/** Polls `probe` until it answers (a file written, a job finished); rejects past the deadline. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  deadlineMs: number,
): Promise<T> {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`no ${what} within ${deadlineMs / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

/** Processes whose command line names `text` (a run's folder, a cluster's config): what must not be left behind. */
export function processesNaming(text: string): string[] {
  const ps = spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).stdout
  return ps.split('\n').filter((line) => line.includes(text) && !/\bps -eo\b/.test(line))
}
