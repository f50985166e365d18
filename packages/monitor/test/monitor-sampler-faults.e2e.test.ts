import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { expectNothingLeft, faultBin, faultEnv, runCliTimed, trainerEndMs } from './helpers/fault-tools.js'
import { E2E_TEST_TIMEOUT_MS, ofType, readRecords, tempDir } from './helpers/harness.js'

/** The bound: the monitor is gone within this long after the trainer's end, whatever its samplers do. */
const EXIT_BOUND_MS = 10_000

// Each fake stands for a way a GPU tool fails on a sick machine. `$D/nap` is sleep under a name `ps` can find.
const SAMPLER_FAULTS: Record<string, string> = {
  'hangs (a dead GPU)': '"$D/nap" 999',
  'ignores SIGTERM, as do its children': `trap '' TERM\n"$D/nap" 999 &\nwhile :; do "$D/nap" 1; done`,
  'leaves a setsid child holding the pipe': 'setsid "$D/nap" 999 &\n"$D/nap" 999',
  'leaves an env -i setsid child holding the pipe': 'env -i setsid "$D/nap" 999 &\n"$D/nap" 999',
  'forks in a loop': 'while :; do "$D/nap" 999 & "$D/nap" 0.05; done',
  'prints garbage without a newline, then hangs': 'head -c 3000000 /dev/urandom | tr -d "\\n"\n"$D/nap" 999',
}

async function superviseWith(tool: 'nvidia-smi' | 'rocm-smi', body: string) {
  const work = tempDir('rigfit-sampler-fault-')
  const bin = faultBin(work, { [tool]: body })
  const logDir = join(work, 'log')
  const run = await runCliTimed(
    ['monitor', '--quiet', '--interval-ms', '200', '--log-dir', logDir, '--', 'sh', '-c', 'sleep 1'],
    faultEnv(work, bin),
    work,
  )
  return { work, bin, logDir, run }
}

describe.runIf(process.platform === 'linux')(
  'rigfit monitor ends and leaves nothing behind whatever its GPU sampler does',
  { timeout: E2E_TEST_TIMEOUT_MS },
  () => {
    for (const tool of ['nvidia-smi', 'rocm-smi'] as const) {
      it.each(Object.entries(SAMPLER_FAULTS))(`${tool} that %s`, async (_what, body) => {
        const { bin, logDir, run } = await superviseWith(tool, body)
        try {
          expect(run.signal).toBeNull()
          expect(run.code).toBe(0)
          expect(ofType(readRecords(logDir), 'summary')[0]?.outcome).toBe('completed')
          expect(run.closedAtMs - trainerEndMs(logDir)).toBeLessThanOrEqual(EXIT_BOUND_MS)
        } finally {
          await expectNothingLeft(bin)
        }
      })
    }
  },
)
