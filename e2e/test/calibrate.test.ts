import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CalibrationRecord, TrainingPlan } from '@rigfit/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertEngines,
  CLI,
  missingEngines,
  OPTIONAL,
  pythonWithTorch,
  REPO,
  testEnv,
} from './helpers/engines.js'
import { holdMachine, MACHINE_TURN_MS } from './helpers/machine-lock.js'
import { processesNaming, run, Started, waitFor } from './helpers/processes.js'

const python = pythonWithTorch()
const missing = missingEngines('calibrate', [
  { name: 'python3 with torch (python3-torch)', present: python !== undefined },
])

const TINY = join(REPO, 'examples/pytorch/tiny-llama.json')
const PLAN_FLAGS = ['--model', TINY, '--seq', '128', '--target-batch', '16', '--time-budget', '5m']

/** A config folder, a temp folder (the measuring child's files live there) and the environment naming both. */
function sandbox() {
  const root = mkdtempSync(join(tmpdir(), 'rigfit-e2e-calibrate-'))
  const config = join(root, 'config')
  const temp = join(root, 'tmp')
  for (const dir of [config, temp]) mkdirSync(dir, { recursive: true })
  const env = testEnv(python as string, { XDG_CONFIG_HOME: config, TMPDIR: temp })
  return { root, config, temp, env, store: join(config, 'rigfit', 'calibration.jsonl') }
}

const rigfit = (args: string[], env: NodeJS.ProcessEnv, cwd: string) =>
  run(process.execPath, [CLI, ...args], { cwd, env, deadlineMs: 600_000 })

const readStore = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => CalibrationRecord.parse(JSON.parse(line)))

describe.skipIf(missing.length > 0 && OPTIONAL)('rigfit calibrate on the CPU with PyTorch', () => {
  let release: (() => void) | undefined
  beforeAll(async () => {
    assertEngines(missing)
    release = await holdMachine(MACHINE_TURN_MS)
  }, MACHINE_TURN_MS + 60_000)
  afterAll(() => release?.())

  it('measures the plan, appends one record, and the next plan with the same flags uses it', async () => {
    const box = sandbox()
    const before = await rigfit(['plan', ...PLAN_FLAGS, '--json'], box.env, box.root)
    expect(before.code, before.stderr).toBe(0)
    const predicted = TrainingPlan.parse(JSON.parse(before.stdout))
    // No store yet: the speed is the model's, and says so.
    expect(predicted.calibration).toMatchObject({ label: 'predicted', match: 'none', factor: 1 })

    const calibrated = await rigfit(
      ['calibrate', ...PLAN_FLAGS, '--seconds', '3', '--json'],
      box.env,
      box.root,
    )
    expect(calibrated.code, `${calibrated.stdout}\n${calibrated.stderr}`).toBe(0)
    const records = readStore(box.store)
    expect(records).toHaveLength(1)
    const record = records[0] as CalibrationRecord
    expect(record).toMatchObject({
      source: 'calibrate',
      stack: { name: 'plain' },
      device: { kind: 'cpu' },
      settings: {
        modelFamily: predicted.model.modelType,
        params: predicted.params.total,
        seq: 128,
        microBatch: predicted.settings.microBatch,
        gradAccum: predicted.settings.gradAccum,
        precision: predicted.settings.precision,
        threads: predicted.settings.threads,
      },
      predicted: { tokensPerSecond: predicted.throughput.tokensPerSecond },
    })
    expect(record.versions.torch).toMatch(/^\d+\.\d+/)
    expect(record.measured.steps).toBeGreaterThan(0)
    // The step time is the measured speed's own: tokens per step over tokens per second.
    const tokensPerStep = predicted.settings.microBatch * predicted.settings.gradAccum * 128
    expect(record.measured.stepSeconds * record.measured.tokensPerSecond).toBeCloseTo(tokensPerStep, 3)
    const output = JSON.parse(calibrated.stdout) as { store: string; record: CalibrationRecord }
    expect(output.store).toBe(box.store)
    expect(output.record).toEqual(record)
    // The measuring child did not outlive the command.
    expect(processesNaming(box.temp)).toEqual([])

    const after = await rigfit(['plan', ...PLAN_FLAGS, '--json'], box.env, box.root)
    const corrected = TrainingPlan.parse(JSON.parse(after.stdout))
    // The same settings; only the warm-up, a share of the steps the time budget allows, follows the measured speed.
    const withoutWarmup = (plan: TrainingPlan) => ({
      ...plan.settings,
      optimization: plan.settings.optimization && { ...plan.settings.optimization, warmupSteps: 0 },
    })
    expect(withoutWarmup(corrected)).toEqual(withoutWarmup(predicted))
    expect(corrected.settings.optimization?.warmupSteps ?? 0).toBeLessThanOrEqual(corrected.time.steps)
    expect(corrected.throughput.tokensPerSecond).toBeCloseTo(record.measured.tokensPerSecond, 6)
    expect(corrected.throughput.tokensPerSecond).not.toBeCloseTo(predicted.throughput.tokensPerSecond, 0)
    expect(corrected.calibration).toMatchObject({
      label: 'measured on this machine',
      match: 'settings',
      predictedTokensPerSecond: predicted.throughput.tokensPerSecond,
    })
    // The time budget now buys the tokens the measured speed trains in it.
    expect(corrected.tokens.budget / predicted.tokens.budget).toBeCloseTo(
      record.measured.tokensPerSecond / predicted.throughput.tokensPerSecond,
      1,
    )
    const human = await rigfit(['plan', ...PLAN_FLAGS], box.env, box.root)
    expect(human.stdout).toMatch(/Speed \(measured on this machine; the model alone predicts [\d.]+K?\)/)
    const explained = await rigfit(['explain', 'throughput', ...PLAN_FLAGS], box.env, box.root)
    expect(explained.stdout).toMatch(/measured on this machine: ×[\d.]+ on the model's \d+ tokens\/s/)
    expect(explained.stdout).toContain(record.recordedAt)

    const off = await rigfit(['plan', ...PLAN_FLAGS, '--no-calibration', '--json'], box.env, box.root)
    const plain = TrainingPlan.parse(JSON.parse(off.stdout))
    expect(plain.throughput.tokensPerSecond).toBe(predicted.throughput.tokensPerSecond)
    expect(plain.calibration).toBeUndefined()

    const listed = await rigfit(['calibrate', '--list', '--json'], box.env, box.root)
    expect((JSON.parse(listed.stdout) as { records: unknown[] }).records).toEqual([record])
    const cleared = await rigfit(['calibrate', '--clear', '--json'], box.env, box.root)
    expect(JSON.parse(cleared.stdout)).toMatchObject({ removed: 1 })
    expect(existsSync(box.store)).toBe(false)
  })

  it('stops the measuring trainer and writes nothing when interrupted', async () => {
    const box = sandbox()
    const started = new Started(process.execPath, [CLI, 'calibrate', ...PLAN_FLAGS, '--seconds', '600'], {
      cwd: box.root,
      env: box.env,
    })
    await waitFor(
      'the measuring trainer',
      () => (processesNaming(box.temp).some((line) => line.includes('train.py')) ? true : undefined),
      300_000,
    )
    started.child.kill('SIGINT')
    const finished = await started.exited
    expect(finished.code).toBe(9)
    expect(finished.stderr).toContain('calibration interrupted; nothing was written')
    expect(processesNaming(box.temp)).toEqual([])
    expect(existsSync(box.store)).toBe(false)
  })

  it('says what is missing, exit 6, with a Python that cannot import torch', async () => {
    const box = sandbox()
    // The same interpreter without its site packages: torch is not importable, everything else is as it was.
    const noTorch = join(box.root, 'python-without-torch')
    writeFileSync(noTorch, `#!/bin/sh\nexec "${python}" -S "$@"\n`, { mode: 0o755 })
    const result = await rigfit(['calibrate', ...PLAN_FLAGS, '--python', noTorch], box.env, box.root)
    expect(result.code).toBe(6)
    expect(result.stderr).toMatch(/cannot import torch/)
    expect(result.stderr).toMatch(/pip install torch/)
    expect(existsSync(box.store)).toBe(false)
  })
})
