import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { TrainingPlan } from '@rigfit/core'
import { afterEach, describe, expect, it } from 'vitest'
import {
  E2E_TEST_TIMEOUT_MS,
  FAST_FLAGS,
  monitorFakeTrainer,
  ofType,
  planFixture,
  RTX4090_SCENARIO,
  readPlanFixture,
  releaseTrainer,
  StartedMonitors,
  tempDir,
  trainerEvents,
  writeJson,
} from './helpers/harness.js'

// These tests wait for events (a record written, a file, a process gone), never for an amount of time: a
// trainer that must still be running when something happens is held at its last step (--hold-file) until the
// test has seen it happen.
const plan = readPlanFixture()
const monitors = new StartedMonitors()

afterEach(() => monitors.stopAll())

describe('rigfit monitor recovers from failures (end to end, real CLI, fake nvidia-smi and trainer)', {
  timeout: E2E_TEST_TIMEOUT_MS,
}, () => {
  it('relaunches after a CUDA OOM with half the micro-batch, twice the accumulation, the same effective batch, resuming from the checkpoint', async () => {
    const work = tempDir()
    const ckpt = join(work, 'ckpt')
    const hold = join(work, 'release')
    const originalPlan = readFileSync(planFixture, 'utf8')
    const run = monitors.start(
      work,
      `--plan ${planFixture} ${FAST_FLAGS}`,
      `--steps 12 --checkpoint-dir ${ckpt} --checkpoint-every 5 --oom-at-step 7 --oom-above-micro-batch 4 --hold-file ${hold}`,
      RTX4090_SCENARIO,
    )
    // The second attempt finishes only once a sample of it is recorded (checked against the copy below).
    await run.waitForRecord(
      (r) => r.type === 'sample' && r.attempt === 2 && r.gpus.length > 0,
      'a GPU sample during the second attempt',
    )
    releaseTrainer(hold)
    const { result, records, logDir } = await run.finished
    expect(result.code, result.stderr).toBe(0)
    const launches = ofType(records, 'launch')
    expect(launches.map((launch) => launch.settings)).toMatchObject([
      { microBatch: 8, gradAccum: 2, effectiveBatch: 16 },
      { microBatch: 4, gradAccum: 4, effectiveBatch: 16 },
    ])
    expect(ofType(records, 'exit').map((exit) => exit.cause)).toEqual(['gpu-oom', 'success'])
    expect(ofType(records, 'detection').some((d) => d.cause === 'gpu-oom')).toBe(true)
    expect(ofType(records, 'action').find((a) => a.action === 'relaunch')?.cause).toBe('gpu-oom')

    // The trainer saw the new settings through the env vars and the rewritten plan copy.
    const starts = trainerEvents(records).filter((e) => e.event === 'start')
    expect(
      starts.map((s) => [s.microBatch, s.gradAccum, s.planMicroBatch, s.planGradAccum, s.planEffectiveBatch]),
    ).toEqual([
      [8, 2, 8, 2, 16],
      [4, 4, 4, 4, 16],
    ])
    const planCopy = TrainingPlan.parse(JSON.parse(readFileSync(join(logDir, 'plan.attempt-2.json'), 'utf8')))
    expect(planCopy.settings).toMatchObject({ microBatch: 4, gradAccum: 4, effectiveBatch: 16 })
    expect(planCopy.memory.perDevice.total).toBeLessThan(plan.memory.perDevice.total)
    expect(planCopy.warnings.at(-1)?.message).toMatch(/^memory and speed re-estimated for micro-batch 8 → 4/)
    // The live view compares the second attempt's GPU memory with the copy's re-estimated prediction.
    const secondSample = ofType(records, 'sample').find((s) => s.attempt === 2 && s.gpus.length > 0)
    expect(secondSample?.gpus[0]?.predictedBytes).toBe(planCopy.memory.perDevice.total)
    expect(readFileSync(planFixture, 'utf8')).toBe(originalPlan)

    // Attempt 1 checkpointed at step 5 and died at step 7; attempt 2 resumed at 5 and went on from 6.
    expect(trainerEvents(records).find((e) => e.event === 'resumed')).toMatchObject({ attempt: 2, step: 5 })
    const secondSteps = ofType(records, 'metrics').filter(
      (m) => m.attempt === 2 && m.step !== null && m.step > 5,
    )
    expect(secondSteps[0]?.step).toBe(6)
    expect(existsSync(join(ckpt, 'checkpoint.json'))).toBe(true)
    expect(ofType(records, 'summary')[0]).toMatchObject({ outcome: 'completed', exitCode: 0, attempts: 2 })
  })

  it('stops a failing trainer at the retry limit with the monitor exit code', async () => {
    const { result, records } = await monitorFakeTrainer(
      tempDir(),
      `${FAST_FLAGS} --max-restarts 2 --crash-loop-failures 5`,
      '--crash',
      null,
    )
    expect(result.code).toBe(9)
    expect(result.stderr).toMatch(/E_MONITOR_STOPPED.*retry limit/)
    expect(ofType(records, 'launch')).toHaveLength(3)
    expect(ofType(records, 'exit').map((e) => e.cause)).toEqual(['crash', 'crash', 'crash'])
    expect(ofType(records, 'action').filter((a) => a.action === 'relaunch')).toHaveLength(2)
    expect(ofType(records, 'action').at(-1)).toMatchObject({ action: 'stop', cause: 'retry-limit' })
    expect(ofType(records, 'summary')[0]).toMatchObject({ outcome: 'stopped', exitCode: 9, attempts: 3 })
  })

  it('recognises a crash loop before the retry limit', async () => {
    const { result, records } = await monitorFakeTrainer(
      tempDir(),
      `${FAST_FLAGS} --max-restarts 10 --crash-loop-failures 3`,
      '--crash',
      null,
    )
    expect(result.code).toBe(9)
    expect(ofType(records, 'launch')).toHaveLength(3)
    expect(ofType(records, 'action').at(-1)).toMatchObject({ action: 'stop', cause: 'crash-loop' })
  })

  it('kills a trainer that stops making progress and relaunches it', async () => {
    const work = tempDir()
    // Fifteen seconds without progress is a hang: far beyond the gap between two steps, or a trainer's start,
    // on a loaded machine (about a second with both cores busy), so only the scripted hang at step 4 is one.
    const { result, records } = await monitorFakeTrainer(
      work,
      `${FAST_FLAGS} --hang-minutes 0.25`,
      `--steps 8 --checkpoint-dir ${join(work, 'ckpt')} --checkpoint-every 2 --hang-at-step 4 --fault-attempt 1`,
      null,
    )
    expect(result.code, result.stderr).toBe(0)
    expect(ofType(records, 'detection').some((d) => d.cause === 'hang')).toBe(true)
    expect(ofType(records, 'action').some((a) => a.action === 'kill' && a.cause === 'hang')).toBe(true)
    expect(ofType(records, 'exit').map((e) => e.cause)).toEqual(['hang', 'success'])
    expect(trainerEvents(records).find((e) => e.event === 'resumed')).toMatchObject({ attempt: 2, step: 2 })
  })

  it('relaunches on the remaining GPU with doubled accumulation when a GPU falls off the bus', async () => {
    const work = tempDir()
    const dualPlan = writeJson(join(work, 'dual-rtx4090.plan.json'), {
      ...plan,
      hardware: { ...plan.hardware, gpus: 2 },
      settings: {
        ...plan.settings,
        gpus: 2,
        microBatch: 4,
        gradAccum: 2,
        effectiveBatch: 16,
        strategy: 'ddp',
        backend: 'nccl',
      },
      throughput: { ...plan.throughput, tokensPerSecond: 2 * plan.throughput.tokensPerSecond },
    })
    const hold = join(work, 'release')
    const run = monitors.start(
      work,
      `--plan ${dualPlan} ${FAST_FLAGS}`,
      `--steps 80 --checkpoint-dir ${join(work, 'ckpt')} --hold-file ${hold}`,
      'dual-rtx4090-gpu1-falls-off.json',
    )
    // The first attempt is still running when GPU 1 goes: it cannot finish before the test releases it.
    await run.waitForRecord((r) => r.type === 'exit' && r.attempt === 1, 'the end of the first attempt')
    releaseTrainer(hold)
    const { result, records, logDir } = await run.finished
    expect(result.code, result.stderr).toBe(0)
    expect(ofType(records, 'detection').find((d) => d.cause === 'device-lost')?.details).toMatchObject({
      lost: [1],
    })
    expect(ofType(records, 'exit')[0]?.cause).toBe('device-lost')
    const second = ofType(records, 'launch')[1]
    expect(second?.visibleDevices).toEqual([0])
    expect(second?.env).toMatchObject({
      CUDA_VISIBLE_DEVICES: '0',
      CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
      RIGFIT_GRAD_ACCUM: '4',
    })
    expect(second?.settings).toMatchObject({ gpus: 1, microBatch: 4, gradAccum: 4, effectiveBatch: 16 })
    const start = trainerEvents(records).find((e) => e.event === 'start' && e.attempt === 2)
    expect(start).toMatchObject({ cudaVisibleDevices: '0', gradAccum: 4, planEffectiveBatch: 16 })
    const copy = TrainingPlan.parse(JSON.parse(readFileSync(join(logDir, 'plan.attempt-2.json'), 'utf8')))
    expect(copy.settings).toMatchObject({ gpus: 1, strategy: 'single' })
    // One GPU instead of two: more per device (no all-reduce), well under the pair's total.
    expect(copy.throughput.tokensPerSecond).toBeLessThan(2 * plan.throughput.tokensPerSecond * 0.6)
    expect(copy.throughput.tokensPerSecondPerDevice).toBeGreaterThan(
      plan.throughput.tokensPerSecondPerDevice * 0.9,
    )
    expect(copy.warnings.at(-1)?.message).toMatch(
      /re-estimated for 2 GPUs → 1 GPU, gradient accumulation 2 → 4/,
    )
  })

  it('treats a SIGKILL as a host OOM kill and shrinks the micro-batch given by flag', async () => {
    const { result, records } = await monitorFakeTrainer(
      tempDir(),
      `${FAST_FLAGS} --micro-batch 2 --grad-accum 3`,
      '--steps 6 --kill-self-at-step 3 --fault-attempt 1',
      null,
    )
    expect(result.code, result.stderr).toBe(0)
    expect(ofType(records, 'exit')[0]).toMatchObject({ cause: 'host-oom-kill', signal: 'SIGKILL' })
    expect(ofType(records, 'launch').map((l) => l.env.RIGFIT_MICRO_BATCH)).toEqual(['2', '1'])
    expect(ofType(records, 'launch')[1]?.settings).toMatchObject({
      microBatch: 1,
      gradAccum: 6,
      effectiveBatch: 6,
      device: 'cpu',
    })
  })

  it('with --no-oom-recovery exits with the trainer code and records the skipped action', async () => {
    const { result, records } = await monitorFakeTrainer(
      tempDir(),
      `--plan ${planFixture} ${FAST_FLAGS} --no-oom-recovery`,
      '--steps 5 --oom-at-step 2',
      RTX4090_SCENARIO,
    )
    expect(result.code).toBe(1)
    expect(ofType(records, 'launch')).toHaveLength(1)
    expect(ofType(records, 'action').find((a) => a.action === 'skipped')?.reason).toMatch(/--no-oom-recovery/)
  })
})
