import { statSync } from 'node:fs'
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

// ESC, BEL and CR: what a tool's text needs to act on a terminal (title, screen clear, cursor moves).
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for raw control characters is the point
const RAW_CONTROL = /[\u001b\u0007\r]/

describe.runIf(process.platform === 'linux')(
  "rigfit monitor tells a sampler's text escaped, and few times",
  { timeout: E2E_TEST_TIMEOUT_MS },
  () => {
    it.each([
      [
        'escape sequences',
        `i=0\nwhile :; do i=$((i+1)); printf '\\033]0;PWNED\\007\\033[2J\\033[10;10HGPU %s fell off the bus\\r\\n' $i; "$D/nap" 0.02; done`,
      ],
      ['binary garbage', 'while :; do head -c 200000 /dev/urandom; "$D/nap" 0.05; done'],
    ])('nvidia-smi printing %s', async (_what, body) => {
      const work = tempDir('rigfit-sampler-text-')
      const bin = faultBin(work, { 'nvidia-smi': body })
      const logDir = join(work, 'log')
      try {
        const run = await runCliTimed(
          ['monitor', '--interval-ms', '100', '--log-dir', logDir, '--', 'sh', '-c', 'sleep 4'],
          faultEnv(work, bin),
          work,
        )
        expect(run.code).toBe(0)
        expect(run.stderr).not.toMatch(RAW_CONTROL)
        expect(run.stdout).not.toMatch(RAW_CONTROL)
        const told = run.stderr.split('\n').filter((line) => line.startsWith('rigfit: warning: nvidia-smi: '))
        expect(told.length).toBeGreaterThan(0)
        expect(told.length).toBeLessThanOrEqual(5)
        expect(run.stderr).toMatch(/…and [\d,]+ more like it \(nvidia-smi lines that were not readings\)/)
        const records = readRecords(logDir)
        expect(
          ofType(records, 'detection').filter((r) => r.cause === 'device-error').length,
        ).toBeLessThanOrEqual(5)
        expect(statSync(join(logDir, 'monitor.jsonl')).size).toBeLessThan(1024 * 1024)
      } finally {
        await expectNothingLeft(bin)
      }
    })
  },
)
