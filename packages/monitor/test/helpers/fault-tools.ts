import { execFileSync } from 'node:child_process'
import { chmodSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { expect } from 'vitest'
import { type CliResult, collect, EVENT_DEADLINE_MS, readRecords, startCli, waitFor } from './harness.js'

/**
 * Fake GPU tools for fault injection, in a folder of their own. Every process they start runs `nap` (a link to
 * sleep inside that folder), so `ps` finds each one by the folder's path in its arguments, even a child that
 * cleared its environment and left the session.
 */
export function faultBin(work: string, tools: Record<string, string>): string {
  const bin = join(work, 'bin')
  execFileSync('mkdir', ['-p', bin])
  symlinkSync(execFileSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).trim(), join(bin, 'nap'))
  for (const [name, body] of Object.entries(tools)) {
    const path = join(bin, name)
    writeFileSync(path, `#!/bin/sh\nD=$(dirname "$0")\n${body}\n`)
    chmodSync(path, 0o755)
  }
  return bin
}

/** The processes whose arguments name `folder`: what a fault test started and must not leave behind. */
export function processesUnder(folder: string): string[] {
  const table = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' })
  return table
    .split('\n')
    .filter((line) => line.includes(folder))
    .filter((line) => !/^\s*\d+\s+Z/.test(line))
}

/** After a fault test: nothing it started is left (waiting out the kernel's delivery of the last SIGKILL). */
export async function expectNothingLeft(folder: string): Promise<void> {
  try {
    await waitFor(() => processesUnder(folder).length === 0, EVENT_DEADLINE_MS, 'the fake tools to end')
  } finally {
    expect(processesUnder(folder)).toEqual([])
  }
}

/** The environment of a monitor sampling with the fakes in `bin` only: no other GPU tool, no host sysfs. */
export function faultEnv(work: string, bin: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
    RIGFIT_SYSFS_ROOT: join(work, 'sysfs-empty'),
    NO_COLOR: '1',
    ...extra,
  }
}

export interface TimedRun extends CliResult {
  /** When the monitor process ended, by this machine's clock (ms since the epoch). */
  closedAtMs: number
}

/**
 * Runs the CLI to its end; a monitor still running `limitMs` after its start is killed (the test then fails on
 * the exit code rather than hanging).
 */
export async function runCliTimed(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  limitMs = 120_000,
): Promise<TimedRun> {
  const child = startCli(args, env, cwd)
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs)
  const result = await collect(child)
  clearTimeout(killer)
  return { ...result, closedAtMs: Date.now() }
}

/** The trainer's recorded end (its exit record) in ms since the epoch. */
export function trainerEndMs(logDir: string): number {
  const exit = readRecords(logDir).find((record) => record.type === 'exit')
  if (exit === undefined) throw new Error(`no exit record in ${logDir}`)
  return Date.parse(exit.time)
}
