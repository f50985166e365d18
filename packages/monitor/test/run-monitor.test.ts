import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { type MonitorRecord, TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { DEFAULT_MONITOR_OPTIONS, type MonitorOptions, runMonitor } from '../src/index.js'
import {
  fakeTrainer,
  fixturesDir,
  monitorEnv,
  ofType,
  planFixture,
  tempDir,
  trainerEvents,
  waitFor,
} from './helpers/harness.js'

const plan = TrainingPlan.parse(JSON.parse(readFileSync(planFixture, 'utf8')))
const rtx4090 = join(fixturesDir, 'nvidia-smi', 'workstation-rtx4090.json')

function options(work: string, command: string[], overrides: Partial<MonitorOptions> = {}): MonitorOptions {
  const env = monitorEnv(work, rtx4090)
  return {
    ...DEFAULT_MONITOR_OPTIONS,
    command: [process.execPath, fakeTrainer, ...command],
    cwd: work,
    env,
    plan: null,
    planPath: null,
    overrides: {},
    logDir: join(work, 'log'),
    intervalMs: 50,
    restartDelaySeconds: 0,
    graceSeconds: 0.5,
    actions: { ...DEFAULT_MONITOR_OPTIONS.actions },
    view: 'quiet',
    sysfsRoot: env.RIGFIT_SYSFS_ROOT as string,
    handleSignals: false,
    ...overrides,
  }
}

function quietIo() {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let text = ''
  stdout.resume()
  stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8')
  })
  return { io: { stdout, stderr, color: false }, stderrText: () => text }
}

function recordsSoFar(logDir: string): MonitorRecord[] {
  const path = join(logDir, 'monitor.jsonl')
  if (!existsSync(path)) return []
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.endsWith('}'))
    .map((line) => JSON.parse(line) as MonitorRecord)
}

function writeSupply(root: string, name: string, files: Record<string, string>): void {
  const dir = join(root, 'class', 'power_supply', name)
  mkdirSync(dir, { recursive: true })
  for (const [file, value] of Object.entries(files)) writeFileSync(join(dir, file), `${value}\n`)
}

describe('runMonitor (in process, fake nvidia-smi and trainer)', () => {
  it('warns on battery, pauses below --min-battery and resumes on AC', async () => {
    const work = tempDir()
    const sysfs = join(work, 'sysfs-laptop')
    writeSupply(sysfs, 'BAT0', { type: 'Battery', present: '1', status: 'Charging', capacity: '80' })
    writeSupply(sysfs, 'AC', { type: 'Mains', online: '1' })
    const o = options(work, ['--steps', '150', '--step-ms', '10'], {
      sysfsRoot: sysfs,
      minBatteryPercent: 20,
    })
    const { io } = quietIo()
    const run = runMonitor(o, io)
    const has = (probe: (r: MonitorRecord) => boolean) => recordsSoFar(o.logDir).some(probe)

    await waitFor(() => has((r) => r.type === 'metrics'), 20_000, 'the first metrics')
    writeSupply(sysfs, 'AC', { online: '0' })
    writeSupply(sysfs, 'BAT0', { status: 'Discharging', capacity: '50' })
    await waitFor(
      () => has((r) => r.type === 'detection' && r.cause === 'on-battery'),
      20_000,
      'the on-battery warning',
    )
    writeSupply(sysfs, 'BAT0', { capacity: '15' })
    await waitFor(() => has((r) => r.type === 'action' && r.action === 'pause'), 20_000, 'the battery pause')
    writeSupply(sysfs, 'AC', { online: '1' })
    writeSupply(sysfs, 'BAT0', { status: 'Charging', capacity: '16' })
    const result = await run
    expect(result).toMatchObject({ exitCode: 0, outcome: 'completed' })

    const records = recordsSoFar(o.logDir)
    const onBattery = ofType(records, 'detection').find((d) => d.cause === 'on-battery')
    expect(onBattery?.details).toMatchObject({ onBattery: true, percent: 50 })
    const actions = ofType(records, 'action')
    expect(actions.find((a) => a.action === 'pause')).toMatchObject({
      cause: 'battery',
      details: { percent: 15, minBatteryPercent: 20 },
    })
    expect(actions.find((a) => a.action === 'resume')?.reason).toMatch(/AC/)
    expect(actions.findIndex((a) => a.action === 'pause')).toBeLessThan(
      actions.findIndex((a) => a.action === 'resume'),
    )
    expect(trainerEvents(records).some((e) => e.event === 'continued')).toBe(true)
  })

  it('with --no-battery only records that pausing is switched off', async () => {
    const work = tempDir()
    const sysfs = join(work, 'sysfs-laptop')
    writeSupply(sysfs, 'BAT0', { type: 'Battery', present: '1', status: 'Discharging', capacity: '9' })
    writeSupply(sysfs, 'AC', { type: 'Mains', online: '0' })
    const o = options(work, ['--steps', '10'], {
      sysfsRoot: sysfs,
      actions: { ...DEFAULT_MONITOR_OPTIONS.actions, battery: false },
    })
    const result = await runMonitor(o, quietIo().io)
    expect(result.exitCode).toBe(0)
    const actions = ofType(recordsSoFar(o.logDir), 'action')
    expect(actions.some((a) => a.action === 'pause')).toBe(false)
    expect(actions.find((a) => a.action === 'skipped')).toMatchObject({ cause: 'battery' })
    expect(actions.find((a) => a.action === 'skipped')?.reason).toMatch(/--no-battery/)
  })

  it('finds a steady memory rise across steps, projects the OOM step, and calls it imminent near capacity', async () => {
    const work = tempDir()
    // 8 x 1000 MiB + 500 MiB at start, +400 MiB a step: the 24564 MiB card is full around step 40.
    const o = options(work, ['--steps', '36', '--step-ms', '25', '--leak-mib-per-step', '400'], {
      plan,
      planPath: planFixture,
    })
    const result = await runMonitor(o, quietIo().io)
    expect(result.exitCode).toBe(0)
    const detections = ofType(recordsSoFar(o.logDir), 'detection')
    const leak = detections.find((d) => d.cause === 'memory-leak')
    expect(leak).toBeDefined()
    const details = leak?.details as {
      slopeBytesPerUnit: number
      unit: string
      r2: number
      projectedOomIn: { steps: number }
      projectedOomAt: string
    }
    expect(details.unit).toBe('step')
    const mibPerStep = details.slopeBytesPerUnit / 1024 ** 2
    expect(mibPerStep).toBeGreaterThan(300)
    expect(mibPerStep).toBeLessThan(500)
    expect(details.r2).toBeGreaterThan(0.8)
    expect(Number.isNaN(Date.parse(details.projectedOomAt))).toBe(false)
    expect(leak?.message).toMatch(/around step \d+/)
    const projectedStep = Number(/around step (\d+)/.exec(leak?.message ?? '')?.[1])
    expect(projectedStep).toBeGreaterThan(30)
    expect(projectedStep).toBeLessThan(55)
    expect(detections.some((d) => d.cause === 'oom-imminent')).toBe(true)
  })

  it('reports no leak when memory stays flat', async () => {
    const work = tempDir()
    const o = options(work, ['--steps', '30', '--step-ms', '15'], { plan, planPath: planFixture })
    await runMonitor(o, quietIo().io)
    const detections = ofType(recordsSoFar(o.logDir), 'detection')
    expect(detections.filter((d) => d.cause === 'memory-leak' || d.cause === 'oom-imminent')).toEqual([])
  })

  it('reads Hugging Face Trainer log dicts and its tqdm bar', async () => {
    const work = tempDir()
    const o = options(work, ['--steps', '20', '--step-ms', '10', '--hf-logs'])
    const result = await runMonitor(o, quietIo().io)
    expect(result.exitCode).toBe(0)
    const metrics = ofType(recordsSoFar(o.logDir), 'metrics')
    expect(metrics.some((m) => m.source === 'hf' && m.loss !== null && m.learningRate === 4e-5)).toBe(true)
    expect(metrics.some((m) => m.source === 'tqdm' && m.totalSteps === 20)).toBe(true)
    expect(metrics.at(-1)).toMatchObject({ step: 20, totalSteps: 20 })
  })

  it('follows a metrics file', async () => {
    const work = tempDir()
    const metricsFile = join(work, 'metrics.jsonl')
    const o = options(work, ['--steps', '12', '--step-ms', '30', '--metrics-file', metricsFile], {
      metricsFile,
    })
    const result = await runMonitor(o, quietIo().io)
    expect(result.exitCode).toBe(0)
    // Steps 1-11 exist only in the file (the trainer's stdout has just its start and done lines).
    const fromFile = ofType(recordsSoFar(o.logDir), 'metrics').filter((m) => m.source === 'file')
    expect(fromFile.map((m) => m.step).slice(0, 11)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    expect(fromFile.at(-1)?.loss).not.toBeNull()
  })

  it('stops with a report when the OOM ladder is exhausted', async () => {
    const work = tempDir()
    const o = options(work, ['--steps', '5', '--oom-at-step', '1'], {
      overrides: { microBatch: 1, gradAccum: 4, gradCheckpointing: true, precision: 'bf16-mixed' },
    })
    const result = await runMonitor(o, quietIo().io)
    expect(result).toMatchObject({ stoppedByMonitor: true, exitCode: 9, outcome: 'stopped', attempts: 1 })
    expect(result.reason).toMatch(/micro-batch is 1.*gradient checkpointing is on.*bf16-mixed/)
    expect(result.suggestion).toMatch(/LoRA/)
  })

  it('climbs the ladder: micro-batch 1 turns on checkpointing, then leaves fp32', async () => {
    const work = tempDir()
    const o = options(work, ['--steps', '3', '--oom-at-step', '1', '--fault-attempt', '1'], {
      overrides: { microBatch: 1, gradAccum: 2, gradCheckpointing: false, precision: 'fp32' },
    })
    await runMonitor(o, quietIo().io)
    const launches = ofType(recordsSoFar(o.logDir), 'launch')
    expect(launches.map((l) => [l.env.RIGFIT_GRAD_CKPT, l.env.RIGFIT_PRECISION])).toEqual([
      ['0', 'fp32'],
      ['1', 'fp32'],
    ])
  })
})
