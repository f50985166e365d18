import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MonitorRecord } from '@rigfit/core'
import { afterEach, describe, expect, it } from 'vitest'
import {
  argv,
  collect,
  E2E_TEST_TIMEOUT_MS,
  EVENT_DEADLINE_MS,
  FAST_FLAGS,
  fakeTrainer,
  fixturesDir,
  isAlive,
  monitorEnv,
  ofType,
  planFixture,
  processState,
  RTX4090_SCENARIO,
  readPlanFixture,
  readRecords,
  releaseTrainer,
  runCli,
  StartedMonitors,
  startCli,
  tempDir,
  trainerEvents,
  waitFor,
  writeJson,
  writeJsonAtomic,
} from './helpers/harness.js'

// These tests wait for events (a record written, a file, a process gone), never for an amount of time: a
// trainer that must still be running when something happens is held at its last step (--hold-file) until the
// test has seen it happen, and readings change when the test writes them, not on a schedule.
const plan = readPlanFixture()
const monitors = new StartedMonitors()

afterEach(() => monitors.stopAll())

describe('rigfit monitor (end to end, real CLI, fake nvidia-smi and trainer)', {
  timeout: E2E_TEST_TIMEOUT_MS,
}, () => {
  it('pauses the trainer above --max-temp and resumes it only below --max-temp minus --temp-hysteresis', async () => {
    const work = tempDir()
    const hold = join(work, 'release')
    const overrides = join(work, 'gpu-overrides.json')
    const setTemperature = (celsius: number) =>
      writeJsonAtomic(overrides, { 0: { 'temperature.gpu': celsius } })
    setTemperature(66)
    const run = monitors.start(
      work,
      `${FAST_FLAGS} --max-temp 85 --temp-hysteresis 10`,
      `--steps 20 --hold-file ${hold}`,
      'rtx3090-blower-card.json',
      { RIGFIT_FAKE_NVIDIA_SMI_OVERRIDES: overrides },
    )
    const launch = await run.waitForRecord((r) => r.type === 'launch', 'the launch')
    const trainerPid = launch.type === 'launch' ? launch.pid : 0
    await run.waitForRecord((r) => r.type === 'metrics', 'the first metrics')
    const sampleAt = (celsius: number) => (r: MonitorRecord) =>
      r.type === 'sample' && r.attempt === 1 && r.gpus[0]?.temperatureC === celsius
    const actionsSoFar = () => ofType(run.records(), 'action')

    // At the limit is not above it.
    setTemperature(85)
    await run.waitForRecord(sampleAt(85), 'a sample at 85 °C')
    expect(actionsSoFar()).toEqual([])
    setTemperature(86)
    await run.waitForRecord((r) => r.type === 'action' && r.action === 'pause', 'the pause')
    // The trainer really stopped: the kernel shows its process stopped (T) while the run is paused.
    await waitFor(() => processState(trainerPid) === 'T', EVENT_DEADLINE_MS, 'the trainer to stop')
    // Cooler, but not below 85 − 10: still paused.
    setTemperature(81)
    await run.waitForRecord(sampleAt(81), 'a sample at 81 °C')
    setTemperature(78)
    await run.waitForRecord(sampleAt(78), 'a sample at 78 °C')
    expect(actionsSoFar().map((a) => a.action)).toEqual(['pause'])
    expect(processState(trainerPid)).toBe('T')
    setTemperature(74)
    await run.waitForRecord((r) => r.type === 'action' && r.action === 'resume', 'the resume')
    // Released only once it has said it got SIGCONT: a trainer left unscheduled until the release could
    // otherwise finish its last step before its handler runs.
    await run.waitForRecord(
      (r) => r.type === 'output' && r.line.startsWith('{"event":"continued"'),
      'the trainer to continue',
    )
    releaseTrainer(hold)
    const { result, records } = await run.finished

    expect(result.code, result.stderr).toBe(0)
    const actions = ofType(records, 'action')
    const pause = actions.find((a) => a.action === 'pause')
    const resume = actions.find((a) => a.action === 'resume')
    expect(pause).toMatchObject({ cause: 'temperature', details: { temperatureC: 86, maxTempC: 85 } })
    expect(resume).toMatchObject({ cause: 'temperature', details: { temperatureC: 74, resumeBelowC: 75 } })
    expect(actions.filter((a) => a.action === 'pause')).toHaveLength(1)

    // Each action follows the sample that triggered it. Nothing at or below 85 °C paused the run, and 81 and
    // 78 °C (not below 75) did not resume it. Samples taken before nvidia-smi first answered carry no GPU.
    const at = (record: MonitorRecord) => records.indexOf(record)
    const pauseAt = at(pause as MonitorRecord)
    const resumeAt = at(resume as MonitorRecord)
    const temps = (from: number, to: number) =>
      ofType(records, 'sample')
        .filter((s) => at(s) > from && at(s) < to && s.gpus.length > 0)
        .map((s) => s.gpus[0]?.temperatureC ?? null)
    const beforePause = temps(-1, pauseAt)
    expect(beforePause.at(-1)).toBe(86)
    expect(beforePause.slice(0, -1)).toContain(85)
    expect(beforePause.slice(0, -1).every((t) => t !== null && t <= 85)).toBe(true)
    const whilePaused = temps(pauseAt, resumeAt)
    expect(whilePaused.at(-1)).toBe(74)
    expect(whilePaused.slice(0, -1)).toEqual(expect.arrayContaining([81, 78]))
    expect(whilePaused.slice(0, -1).every((t) => t !== null && t >= 75)).toBe(true)

    // It got SIGCONT, went on to its last step, and the pause counts as paused time.
    expect(trainerEvents(records).some((e) => e.event === 'continued')).toBe(true)
    expect(trainerEvents(records).at(-1)).toMatchObject({ event: 'done', step: 20 })
    expect(ofType(records, 'summary')[0]?.pausedSeconds).toBeGreaterThan(0)
  })

  it('on Ctrl-C stops the trainer and its grandchild, even one that ignores SIGINT and SIGTERM', async () => {
    const work = tempDir()
    const logDir = join(work, 'log')
    const pidFile = join(work, 'pids.json')
    const trainer = `--steps 100000 --step-ms 20 --spawn-grandchild --grandchild-ignores-signals --pid-file ${pidFile}`
    const cli = startCli(
      [
        'monitor',
        ...argv(`--log-dir ${logDir} --interval-ms 100 --grace-seconds 0.3 --`),
        process.execPath,
        fakeTrainer,
        ...argv(trainer),
      ],
      monitorEnv(work, join(fixturesDir, 'nvidia-smi', RTX4090_SCENARIO)),
      work,
    )
    const done = collect(cli)
    const pids = await waitFor(
      () =>
        existsSync(pidFile)
          ? (JSON.parse(readFileSync(pidFile, 'utf8')) as { trainer: number; grandchild: number })
          : null,
      EVENT_DEADLINE_MS,
      'the trainer to write its pids',
    )
    expect(isAlive(pids.trainer) && isAlive(pids.grandchild)).toBe(true)
    cli.kill('SIGINT')
    const result = await done
    expect(isAlive(pids.trainer)).toBe(false)
    expect(isAlive(pids.grandchild)).toBe(false)
    // The trainer handled SIGINT itself (saved and exited 130): that is the monitor's exit code too.
    expect(result.code).toBe(130)
    const records = readRecords(logDir)
    expect(ofType(records, 'action').some((a) => a.action === 'stop' && a.cause === 'interrupt')).toBe(true)
    expect(ofType(records, 'exit')[0]?.cause).toBe('interrupted')
    expect(ofType(records, 'summary')[0]).toMatchObject({ outcome: 'interrupted', exitCode: 130 })
    expect(ofType(records, 'launch')).toHaveLength(1)
  })

  it('--json prints one valid JSON record per line on stdout and the trainer output on stderr', async () => {
    const work = tempDir()
    const hold = join(work, 'release')
    const run = monitors.start(
      work,
      `--json ${FAST_FLAGS} --plan ${planFixture}`,
      `--steps 15 --hold-file ${hold}`,
      RTX4090_SCENARIO,
    )
    await run.waitForRecord(
      (r) => r.type === 'sample' && r.attempt !== null && r.gpus.length > 0,
      'a GPU sample while the trainer runs',
    )
    releaseTrainer(hold)
    const { result } = await run.finished
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.split('\n').filter((line) => line !== '')
    expect(lines.length).toBeGreaterThan(5)
    const records = lines.map((line) => MonitorRecord.parse(JSON.parse(line)))
    const types = new Set(records.map((r) => r.type))
    for (const type of ['start', 'launch', 'sample', 'metrics', 'exit', 'summary'] as const)
      expect(types).toContain(type)
    expect(types).not.toContain('output')
    expect(records[0]?.type).toBe('start')
    expect(records.at(-1)?.type).toBe('summary')
    expect(result.stderr).toContain('"event":"done"')
    const sample = ofType(records, 'sample').find((s) => s.attempt !== null && s.gpus.length > 0)
    expect(sample?.gpus[0]?.predictedBytes).toBe(plan.memory.perDevice.total)
  })

  it('refuses bad input with a coded error and a suggestion', async () => {
    const work = tempDir()
    const env = monitorEnv(work, null)
    const cli = (args: string) => runCli(argv(args), env, work)
    const noCommand = await cli(`monitor --log-dir ${join(work, 'a')}`)
    expect(noCommand.code).toBe(2)
    expect(noCommand.stderr).toMatch(/E_NO_COMMAND[\s\S]*Suggestion:/)

    const badPlan = writeJson(join(work, 'bad.plan.json'), { schemaVersion: 1, mode: 'turbo' })
    const invalid = await cli(`monitor --plan ${badPlan} -- true`)
    expect(invalid.code).toBe(4)
    expect(invalid.stderr).toMatch(/bad\.plan\.json/)

    const notFound = await cli(`monitor --log-dir ${join(work, 'b')} -- no-such-trainer-binary`)
    expect(notFound.code).toBe(3)
    expect(notFound.stderr).toMatch(/E_COMMAND_NOT_FOUND/)

    const hysteresis = await cli('monitor --max-temp 80 --temp-hysteresis 90 -- true')
    expect(hysteresis.code).toBe(2)
    expect(hysteresis.stderr).toMatch(/--temp-hysteresis/)

    const logDir = join(work, 'c')
    expect((await cli(`monitor --log-dir ${logDir} -- true`)).code).toBe(0)
    const again = await cli(`monitor --log-dir ${logDir} -- true`)
    expect(again.code).toBe(8)
    expect(again.stderr).toMatch(/E_LOG_EXISTS[\s\S]*--force/)
    expect((await cli(`monitor --log-dir ${logDir} --force -- true`)).code).toBe(0)
  })
})
