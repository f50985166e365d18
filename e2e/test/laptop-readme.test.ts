import { existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertEngines, missingEngines, OPTIONAL, pythonWithTorch, REPO, testEnv } from './helpers/engines.js'
import { holdMachine, MACHINE_TURN_MS } from './helpers/machine-lock.js'
import { run } from './helpers/processes.js'

const python = pythonWithTorch()
const missing = missingEngines('laptop-readme', [
  { name: 'python3 with torch (python3-torch)', present: python !== undefined },
])

/** The shell block the README marks as the laptop run, exactly as a reader copies it. */
function readmeLaptopCommands(): string {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8')
  const block = /<!-- e2e: laptop-run -->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1]
  if (!block) throw new Error('README.md has no ```sh block after <!-- e2e: laptop-run -->')
  return block
}

// Generous: on a busy machine the CPU trainer's threads wait on each other and a step can take 30 times longer.
const TEST_DEADLINE = 900_000

interface MonitorRecord {
  type: string
  [key: string]: unknown
}

describe.skipIf(missing.length > 0 && OPTIONAL)("the README's one-command laptop run", () => {
  let release: (() => void) | undefined
  beforeAll(async () => {
    assertEngines(missing)
    release = await holdMachine(MACHINE_TURN_MS)
  }, MACHINE_TURN_MS + 60_000)
  afterAll(() => release?.())

  it('plans, exports and trains under the monitor; the run completes with metrics, a summary and a checkpoint', {
    timeout: TEST_DEADLINE,
  }, async () => {
    const commands = readmeLaptopCommands()
    // A reader runs it from a checkout: the same relative paths, with `rigfit` and `python3` on PATH.
    const dir = mkdtempSync(join(tmpdir(), 'rigfit-e2e-laptop-'))
    symlinkSync(join(REPO, 'examples'), join(dir, 'examples'))
    const result = await run('bash', ['-c', commands], {
      cwd: dir,
      env: testEnv(python as string),
      deadlineMs: 840_000,
    })
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0)

    const maxSteps = Number(/--max-steps (\d+)/.exec(commands)?.[1])
    const runs = readdirSync(join(dir, 'rigfit-runs'))
    expect(runs).toHaveLength(1)
    const records = readFileSync(join(dir, 'rigfit-runs', runs[0] as string, 'monitor.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as MonitorRecord)
    const metrics = records.filter((r) => r.type === 'metrics')
    // The monitor read the trainer's JSON lines: steps counted to the end, the total known for the ETA.
    expect(metrics.at(-1)).toMatchObject({ source: 'json', step: maxSteps, totalSteps: maxSteps })
    expect(metrics.every((m) => typeof m.loss === 'number' && typeof m.tokensPerSecond === 'number')).toBe(
      true,
    )
    expect(records.at(-1)).toMatchObject({ type: 'summary', outcome: 'completed', exitCode: 0 })
    const plan = JSON.parse(readFileSync(join(dir, 'run/rigfit-plan.json'), 'utf8')) as { mode: string }
    const checkpoint = join(
      dir,
      `checkpoints/rigfit-${plan.mode}/ckpt-${String(maxSteps).padStart(8, '0')}.pt`,
    )
    expect(existsSync(checkpoint)).toBe(true)
  })
})
