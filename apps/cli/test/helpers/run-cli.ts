import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const cli = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

// An empty config dir: a developer's own community packs must not change what the tests see.
const configHome = mkdtempSync(join(tmpdir(), 'rigfit-config-'))

/** A catalog model's estimate on a catalog GPU: the command the start-up and bundle tests run. */
export const ESTIMATE_ARGS: readonly string[] = [
  'estimate',
  '--model',
  'llama-3.1-8b',
  '--gpu',
  'RTX 4090',
  '--seq',
  '1024',
  '--micro-batch',
  '1',
]

export interface CliRun {
  status: number | null
  stdout: string
  stderr: string
}

/** Runs the built CLI as a user would, in `cwd` (default: the current directory). */
export function rigfit(args: string[], cwd?: string, env: NodeJS.ProcessEnv = {}): CliRun {
  const result = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, NO_COLOR: '1', XDG_CONFIG_HOME: configHome, ...env },
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

/**
 * Runs the built CLI without blocking the event loop, for tests whose servers (a fake Hub) answer it in-process.
 */
export function rigfitAsync(args: string[], cwd?: string, env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: '1', XDG_CONFIG_HOME: configHome, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })))
}

/** Runs with --json and returns the parsed stdout; throws with the output when the command fails. */
// biome-ignore lint/suspicious/noExplicitAny: JSON read back from the CLI
export function rigfitJson(args: string[], cwd?: string, env: NodeJS.ProcessEnv = {}): any {
  const result = rigfit([...args, '--json'], cwd, env)
  if (result.status !== 0) {
    throw new Error(`rigfit ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`)
  }
  return JSON.parse(result.stdout)
}
