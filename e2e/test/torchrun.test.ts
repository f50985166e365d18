import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { effectiveBatchOf, worldSize } from '@rigfit/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  assertEngines,
  missingEngines,
  OPTIONAL,
  onPath,
  pythonWithTorch,
  TRAIN_PY,
  testEnv,
} from './helpers/engines.js'
import { holdMachine, MACHINE_TURN_MS } from './helpers/machine-lock.js'
import { freePort, run, Started } from './helpers/processes.js'
import { exportedPlan, flagValue, planInto, rigfitJson, tinyModelDir } from './helpers/rigfit.js'
import { explainLaunchFailure, rankSettings, stepLines } from './helpers/trainer-output.js'

const python = pythonWithTorch()
const missing = missingEngines('torchrun', [
  { name: 'python3 with torch (python3-torch)', present: python !== undefined },
  { name: 'torchrun', present: onPath('torchrun') !== undefined },
])
const RUN_DEADLINE = 840_000
const TEST_DEADLINE = 900_000
const STEPS = 3

let release: (() => void) | undefined
beforeAll(async () => {
  release = await holdMachine(MACHINE_TURN_MS)
}, MACHINE_TURN_MS + 60_000)
afterAll(() => release?.())

/** What every rank said against what the exported files say: micro-batch, accumulation and world size. */
function expectRanksMatch(output: string, dir: string, processes: number) {
  const plan = exportedPlan(dir)
  const settings = rankSettings(output)
  expect(settings.map((s) => s.rank).sort(), output).toEqual([...Array(processes).keys()])
  for (const rank of settings) {
    expect(rank).toMatchObject({
      world_size: processes,
      micro_batch: plan.settings.microBatch,
      grad_accum: plan.settings.gradAccum,
      effective_batch: effectiveBatchOf(plan.settings),
      seq: plan.settings.seq,
      device: 'cpu',
    })
  }
  const steps = stepLines(output)
  expect(steps.map((s) => s.step)).toEqual([...Array(STEPS).keys()].map((i) => i + 1))
  const last = steps.at(-1)
  expect(last).toMatchObject({
    total_steps: STEPS,
    tokens: STEPS * effectiveBatchOf(plan.settings) * plan.settings.seq,
  })
  expect(last?.checkpoint_seconds).toBeGreaterThanOrEqual(0)
  return plan
}

describe.skipIf(missing.length > 0 && OPTIONAL)(
  'plan -> export torchrun -> real ranks on the CPU over gloo',
  () => {
    beforeAll(() => assertEngines(missing))

    it('the exported script starts the planned ranks; each trains with the planned batch and a checkpoint is written', {
      timeout: TEST_DEADLINE,
    }, async () => {
      const dir = tinyModelDir('torchrun')
      // Two GPUs planned (two processes on one node), run on this CPU: the same launcher, gloo instead of NCCL.
      await planInto(dir, [
        ...['--gpu', 'RTX 3060 12GB', '--gpus', '2', '--model', join(dir, 'config.json')],
        ...['--seq', '64', '--target-batch', '128', '--method', 'full', '--time-budget', '1m'],
      ])
      await rigfitJson(['export', '--plan', 'plan.json', '--format', 'torchrun', '--out', 'run'], dir)
      const script = readFileSync(join(dir, 'run/launch_torchrun.sh'), 'utf8')
      const nproc = Number(flagValue(script, '--nproc_per_node'))
      const nnodes = Number(flagValue(script, '--nnodes'))
      expect(nproc * nnodes).toBe(worldSize(exportedPlan(join(dir, 'run')).settings))
      expect(nproc).toBe(2)

      const env = testEnv(python as string)
      const args = [
        join(dir, 'run/launch_torchrun.sh'),
        TRAIN_PY,
        '--device',
        'cpu',
        '--max-steps',
        `${STEPS}`,
      ]
      const result = await run('bash', [...args, '--out', 'ckpt'], {
        cwd: dir,
        env,
        deadlineMs: RUN_DEADLINE,
      })
      const output = `${result.stdout}\n${result.stderr}`
      expect(result.code, explainLaunchFailure(output)).toBe(0)
      const plan = expectRanksMatch(output, join(dir, 'run'), nproc * nnodes)
      expect(plan.settings.gradAccum).toBeGreaterThan(1) // the accumulation path runs, not only the micro-batch
      expect(existsSync(join(dir, `ckpt/ckpt-${String(STEPS).padStart(8, '0')}.pt`))).toBe(true)
    })

    it('a two-node CPU export rendezvouses over c10d: two launches of the script make one job', {
      timeout: TEST_DEADLINE,
    }, async () => {
      const dir = tinyModelDir('torchrun-nodes')
      await planInto(dir, [
        '--model',
        join(dir, 'config.json'),
        '--seq',
        '64',
        '--target-batch',
        '16',
        '--method',
        'full',
      ])
      await rigfitJson(
        ['export', '--plan', 'plan.json', '--format', 'torchrun', '--nodes', '2', '--out', 'run'],
        dir,
      )
      const script = readFileSync(join(dir, 'run/launch_torchrun.sh'), 'utf8')
      expect(flagValue(script, '--nnodes')).toBe('2')
      expect(flagValue(script, '--rdzv_backend')).toBe('c10d')

      // Both "nodes" are this host: the rendezvous is on the loopback, on a port nothing else uses.
      const env = testEnv(python as string, {
        MASTER_ADDR: '127.0.0.1',
        MASTER_PORT: String(await freePort()),
        RUN_ID: `e2e-${process.pid}`,
      })
      const args = [join(dir, 'run/launch_torchrun.sh'), TRAIN_PY, '--max-steps', `${STEPS}`, '--out', 'ckpt']
      const nodes = [0, 1].map(() => new Started('bash', args, { cwd: dir, env }))
      const results = await Promise.all(nodes.map((n, i) => n.finish(RUN_DEADLINE, `node ${i}`)))
      const output = results.map((r) => `${r.stdout}\n${r.stderr}`).join('\n')
      for (const result of results) expect(result.code, explainLaunchFailure(output)).toBe(0)
      expectRanksMatch(output, join(dir, 'run'), 2)
      expect(existsSync(join(dir, `ckpt/ckpt-${String(STEPS).padStart(8, '0')}.pt`))).toBe(true)
    })
  },
)

describe.skipIf(python === undefined && OPTIONAL)('the example trainer on a signal', () => {
  beforeAll(() => assertEngines(python === undefined ? ['python3 with torch (python3-torch)'] : []))

  it('SIGTERM saves a checkpoint and exits without a traceback; the next start resumes after it', {
    timeout: TEST_DEADLINE,
  }, async () => {
    const dir = tinyModelDir('signal')
    await planInto(dir, [
      '--model',
      join(dir, 'config.json'),
      '--seq',
      '64',
      '--target-batch',
      '8',
      '--method',
      'full',
    ])
    const env = testEnv(python as string)
    const trainer = new Started(python as string, [TRAIN_PY, '--plan', 'plan.json', '--out', 'ckpt'], {
      cwd: dir,
      env,
    })
    await trainer.waitForOutput(
      'a second step',
      (out) => (stepLines(out).length >= 2 ? true : undefined),
      RUN_DEADLINE,
    )
    trainer.signalGroup('SIGTERM')
    const stopped = await trainer.finish(RUN_DEADLINE, 'the trainer after SIGTERM')
    expect(stopped.code).toBe(128 + 15)
    expect(stopped.stderr).not.toContain('Traceback')
    const lastStep = stepLines(stopped.stdout).at(-1)?.step as number
    expect(existsSync(join(dir, `ckpt/ckpt-${String(lastStep).padStart(8, '0')}.pt`))).toBe(true)

    const resumed = await run(
      python as string,
      [TRAIN_PY, '--plan', 'plan.json', '--out', 'ckpt', '--max-steps', `${lastStep + 2}`],
      {
        cwd: dir,
        env,
        deadlineMs: RUN_DEADLINE,
      },
    )
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain(`at step ${lastStep}`)
    expect(stepLines(resumed.stdout).map((s) => s.step)).toEqual([lastStep + 1, lastStep + 2])
  })
})
