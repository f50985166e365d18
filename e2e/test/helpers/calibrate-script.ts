import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { expect } from 'vitest'
import { REPO } from './engines.js'

/**
 * Runs one of examples/calibrate's CPU measuring scripts on a batch of settings objects (`--configs -`, one
 * process for the batch, which saves PyTorch's start-up per configuration) and returns its JSON results.
 */
export function measureWith<Result>(
  python: string,
  script: string,
  configs: object[],
  timeoutMs: number,
): Result[] {
  const run = spawnSync(python, [join(REPO, 'examples/calibrate', script), '--configs', '-'], {
    input: JSON.stringify(configs),
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  })
  expect(run.status, run.stderr).toBe(0)
  return JSON.parse(run.stdout) as Result[]
}
