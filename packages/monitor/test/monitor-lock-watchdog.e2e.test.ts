import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { expectNothingLeft, faultBin, faultEnv } from './helpers/fault-tools.js'
import {
  collect,
  E2E_TEST_TIMEOUT_MS,
  EVENT_DEADLINE_MS,
  ofType,
  readRecords,
  recordsSoFar,
  runCli,
  startCli,
  tempDir,
  waitFor,
} from './helpers/harness.js'

/** A trainer whose every process runs `$bin/nap` (found by `ps`), one of them in the background. */
function napTrainer(bin: string): string[] {
  return ['sh', '-c', `"${bin}/nap" 600 & echo ready; "${bin}/nap" 600`]
}

async function startedMonitor(work: string, bin: string, logDir: string, extra: string[] = []) {
  const monitor = startCli(
    ['monitor', '--quiet', '--log-dir', logDir, ...extra, '--', ...napTrainer(bin)],
    faultEnv(work, bin),
    work,
  )
  const finished = collect(monitor)
  await waitFor(
    () => recordsSoFar(logDir).some((r) => r.type === 'output' && r.line === 'ready'),
    EVENT_DEADLINE_MS,
    'the trainer to start',
  )
  return { monitor, finished }
}

describe.runIf(process.platform === 'linux')(
  'one monitor per log folder, and no trainer outlives its monitor',
  { timeout: E2E_TEST_TIMEOUT_MS },
  () => {
    it('a second monitor on the same --log-dir fails with exit 8 even with --force, naming the running one', async () => {
      const work = tempDir('rigfit-lock-')
      const bin = faultBin(work, {})
      const logDir = join(work, 'log')
      const first = await startedMonitor(work, bin, logDir)
      try {
        const second = await runCli(
          ['monitor', '--quiet', '--force', '--log-dir', logDir, '--', 'true'],
          faultEnv(work, bin),
          work,
        )
        expect(second.code).toBe(8)
        expect(second.stderr).toContain(`is in use by another rigfit monitor (pid ${first.monitor.pid}`)
        // The first run's records are still its own.
        const start = recordsSoFar(logDir).find((r) => r.type === 'start')
        expect(start?.command).toEqual(napTrainer(bin))
      } finally {
        first.monitor.kill('SIGTERM')
      }
      expect((await first.finished).code).toBe(143)
      expect(ofType(readRecords(logDir), 'summary')[0]?.outcome).toBe('interrupted')
      // Once the first has ended, the folder is free again (with --force for its old log).
      const third = await runCli(
        ['monitor', '--quiet', '--force', '--log-dir', logDir, '--', 'true'],
        faultEnv(work, bin),
        work,
      )
      expect(third.code).toBe(0)
      await expectNothingLeft(bin)
    })

    it('a lock left by a monitor that died is taken over', async () => {
      const work = tempDir('rigfit-lock-')
      const bin = faultBin(work, {})
      const logDir = join(work, 'log')
      mkdirSync(logDir)
      // A pid above Linux's largest (2^22): no process of this host has it.
      writeFileSync(
        join(logDir, 'monitor.lock'),
        JSON.stringify({ pid: 2 ** 22 + 1, host: hostname(), startedAt: 'then' }),
      )
      const run = await runCli(
        ['monitor', '--quiet', '--log-dir', logDir, '--', 'true'],
        faultEnv(work, bin),
        work,
      )
      expect(run.code).toBe(0)
      expect(() => readFileSync(join(logDir, 'monitor.lock'))).toThrow()
    })

    it('SIGKILL of the monitor mid-run ends the trainer and its children', async () => {
      const work = tempDir('rigfit-sigkill-')
      const bin = faultBin(work, {})
      const logDir = join(work, 'log')
      const { monitor, finished } = await startedMonitor(work, bin, logDir)
      monitor.kill('SIGKILL')
      expect((await finished).signal).toBe('SIGKILL')
      await expectNothingLeft(bin)
    })
  },
)
