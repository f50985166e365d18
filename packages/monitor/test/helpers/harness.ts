import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MonitorRecord, type MonitorRecordOf } from '@rigfit/core'

export const fixturesDir = fileURLToPath(new URL('../fixtures/', import.meta.url))
export const binDir = join(fixturesDir, 'bin')
export const fakeTrainer = join(binDir, 'fake-trainer.mjs')
export const planFixture = join(fixturesDir, 'plans', 'rtx4090-gpt2-124m-balanced.json')

function findRepoRoot(start: string): string {
  let dir = start
  while (!existsSync(join(dir, 'pnpm-workspace.yaml'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`no pnpm-workspace.yaml above ${start}`)
    dir = parent
  }
  return dir
}

export const repoRoot = findRepoRoot(fixturesDir)
export const cliBin = join(repoRoot, 'apps', 'cli', 'bin', 'run.js')

export function tempDir(prefix = 'rigfit-monitor-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export function writeJson(path: string, value: unknown): string {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`)
  return path
}

/**
 * The environment of a monitored run: the fake nvidia-smi first on PATH (and this Node for the fakes'
 * shebangs), the scenario it plays, the file the fake trainer reports its GPU memory to, and an empty sysfs
 * root so that the test machine's own battery or AMD cards never take part.
 */
export function monitorEnv(
  work: string,
  scenario: string | null,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const sysfs = join(work, 'sysfs-empty')
  return {
    ...process.env,
    PATH: `${binDir}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    ...(scenario !== null ? { RIGFIT_FAKE_NVIDIA_SMI_SCENARIO: scenario } : {}),
    RIGFIT_FAKE_GPU_STATE: join(work, 'gpu-state.json'),
    RIGFIT_SYSFS_ROOT: sysfs,
    NO_COLOR: '1',
    ...extra,
  }
}

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export function startCli(args: string[], env: NodeJS.ProcessEnv, cwd: string): ChildProcess {
  return spawn(process.execPath, [cliBin, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
}

export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  return new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  )
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliResult> {
  return collect(startCli(args, env, cwd))
}

/** Splits a space-separated argument list (test paths hold no spaces). */
export function argv(text: string): string[] {
  return text.split(' ').filter((arg) => arg !== '')
}

export interface MonitoredRun {
  result: CliResult
  records: MonitorRecord[]
  logDir: string
}

/**
 * Runs `rigfit monitor <flags> --log-dir <work>/log -- node fake-trainer.mjs <trainer>` in `work`, with the fake
 * nvidia-smi playing `scenario` (a file in fixtures/nvidia-smi; null: nvidia-smi fails as without a driver).
 */
export async function monitorFakeTrainer(
  work: string,
  flags: string,
  trainer: string,
  scenario: string | null,
  extraEnv: Record<string, string> = {},
): Promise<MonitoredRun> {
  const logDir = join(work, 'log')
  const scenarioPath = scenario === null ? null : join(fixturesDir, 'nvidia-smi', scenario)
  const args = [
    'monitor',
    ...argv(flags),
    '--log-dir',
    logDir,
    '--',
    process.execPath,
    fakeTrainer,
    ...argv(trainer),
  ]
  const result = await runCli(args, monitorEnv(work, scenarioPath, extraEnv), work)
  const records = existsSync(join(logDir, 'monitor.jsonl')) ? readRecords(logDir) : []
  return { result, records, logDir }
}

/** Every record of a run, each validated against the public MonitorRecord schema. */
export function readRecords(logDir: string): MonitorRecord[] {
  const text = readFileSync(join(logDir, 'monitor.jsonl'), 'utf8')
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => MonitorRecord.parse(JSON.parse(line)))
}

export function ofType<T extends MonitorRecord['type']>(
  records: MonitorRecord[],
  type: T,
): MonitorRecordOf<T>[] {
  return records.filter((record): record is MonitorRecordOf<T> => record.type === type)
}

/** JSON objects the trainer printed on stdout (its start/resumed/step lines), from the recorded output. */
export function trainerEvents(records: MonitorRecord[]): (Record<string, unknown> & { attempt: number })[] {
  return ofType(records, 'output')
    .filter((record) => record.stream === 'stdout' && record.line.startsWith('{"'))
    .map((record) => ({ ...(JSON.parse(record.line) as Record<string, unknown>), attempt: record.attempt }))
}

/** Alive in the kernel's eyes and not a zombie waiting for its reaper. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

export async function waitFor<T>(
  probe: () => T | null | undefined | false,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
