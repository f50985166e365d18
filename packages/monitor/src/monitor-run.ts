import { constants as osConstants } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import {
  ERROR_EXIT_CODES,
  type ExitCause,
  type LaunchSettings,
  type MonitorCause,
  type MonitorRecord,
  type MonitorRecordOf,
  RIGFIT_VERSION,
  RigfitError,
} from '@rigfit/core'
import { checkpointCadence } from './act/checkpoint-cadence.js'
import { replanForGpus } from './act/gpu-failover.js'
import { HysteresisGate } from './act/hysteresis-gate.js'
import { deviceSelectionEnv, initialSettings, launchEnv, parseVisibleDevices } from './act/launch-settings.js'
import { nextOomSettings } from './act/oom-ladder.js'
import { planForLaunch, writePlanCopy } from './act/plan-copy.js'
import { classifyExit, type ExitEvidence, type ExitStatus } from './detect/classify-exit.js'
import { CrashLoopGuard } from './detect/crash-loop.js'
import { matchDeviceError, matchGpuOom } from './detect/failure-patterns.js'
import { MemoryTrend } from './detect/memory-trend.js'
import { MetricsFileTail } from './metrics/metrics-file-tail.js'
import { type ParsedMetrics, parseTrainingLine, type TrainerMetrics } from './metrics/parse-training-line.js'
import { TrainingProgress } from './metrics/training-progress.js'
import type { MonitorOptions } from './options.js'
import { OutputLines } from './process/output-lines.js'
import { ProcessGroup } from './process/process-group.js'
import { RecordSink } from './record/record-sink.js'
import { type Sample, Sampler } from './sampling/sampler.js'
import { formatDuration, formatGiB } from './view/format.js'
import { createView, type Level, type MonitorView, type ViewIo } from './view/monitor-view.js'
import type { ViewState } from './view/status-text.js'

/** The exit code when the monitor itself ended the run (retry limit, crash loop, OOM ladder exhausted). */
export const MONITOR_STOPPED_EXIT_CODE = ERROR_EXIT_CODES.child

export interface MonitorResult {
  /** The trainer's final exit code, or MONITOR_STOPPED_EXIT_CODE when the monitor stopped the run. */
  exitCode: number
  outcome: 'completed' | 'failed' | 'interrupted' | 'stopped'
  reason: string
  stoppedByMonitor: boolean
  /** What a user can do about a stop, when there is something. */
  suggestion: string | null
  attempts: number
  logFile: string
}

type PauseCause = 'temperature' | 'power' | 'battery'
type Stream = 'stdout' | 'stderr'

interface Attempt {
  number: number
  group: ProcessGroup
  startedAtMs: number
  evidence: ExitEvidence
  /** Active-clock second of the last sign of progress (a metric; any output until the first metric). */
  lastProgressAt: number
  sawMetrics: boolean
  stopping: boolean
  lastStep: number | null
  lostDevices: number[]
  deviceErrorIndex: number | null
  reported: Set<string>
}

interface Relaunch {
  settings: LaunchSettings | null
  visible: number[] | null
  changes: string[]
  changed: boolean
}

const MEMORY_ABOVE_PLAN_FRACTION = 1.1
const TRACK_DESCENDANTS_MS = 5000
const FIRST_SAMPLE_TIMEOUT_MS = 3000

/**
 * One supervised run: launches the trainer, samples the machine, reads the trainer's metrics, detects trouble,
 * acts (pause, resume, relaunch with adjusted settings, stop) and records every step with its reason.
 */
export class MonitorRun {
  private readonly sink: RecordSink
  private readonly view: MonitorView
  private readonly sampler: Sampler
  private readonly progress: TrainingProgress
  private readonly crashLoop: CrashLoopGuard
  private readonly metricsTail: MetricsFileTail | null
  private readonly thermalGate: HysteresisGate
  private readonly powerGate: HysteresisGate | null
  private readonly startedAtMs = Date.now()
  private readonly logFile: string

  private attemptCount = 0
  private restarts = 0
  private failures = 0
  private settings: LaunchSettings | null = null
  private visibleDevices: number[] | null
  private inUse: number[] | null = null
  private vendor: 'nvidia' | 'amd' | null = null
  private predictedBytes: number | null = null
  private readonly notes: string[] = []
  private current: Attempt | null = null
  private latestSample: Sample | null = null
  private readonly missing = new Map<number, number>()
  private readonly pausedBy = new Map<PauseCause, string>()
  private pausedSinceMs: number | null = null
  private pausedTotalMs = 0
  private onBattery = false
  private batteryLowReported = false
  private interrupted: NodeJS.Signals | null = null
  private wake: (() => void) | null = null
  private stepTrends = new Map<string, MemoryTrend>()
  private timeTrends = new Map<string, MemoryTrend>()
  private lastTrackMs = 0

  constructor(
    private readonly options: MonitorOptions,
    io: ViewIo,
  ) {
    this.logFile = join(options.logDir, 'monitor.jsonl')
    this.sink = RecordSink.open(this.logFile, {
      force: options.force,
      jsonOut: options.view === 'json' ? io.stdout : null,
    })
    this.view = createView(options.view, io, options.statusSeconds)
    this.visibleDevices = parseVisibleDevices(options.env.CUDA_VISIBLE_DEVICES)
    const plan = options.plan
    this.progress = new TrainingProgress({
      effectiveBatch: plan?.settings.effectiveBatch ?? null,
      seq: plan?.settings.seq ?? null,
      totalStepsOverride: options.totalSteps,
      totalStepsFromPlan: plan !== null && plan.time.steps > 0 ? plan.time.steps : null,
    })
    this.crashLoop = new CrashLoopGuard({
      failures: options.crashLoopFailures,
      windowMs: options.crashLoopMinutes * 60_000,
    })
    this.metricsTail = options.metricsFile !== null ? new MetricsFileTail(options.metricsFile) : null
    this.thermalGate = new HysteresisGate(options.maxTempC, options.maxTempC - options.tempHysteresisC)
    this.powerGate =
      options.maxPowerW === null
        ? null
        : new HysteresisGate(
            options.maxPowerW,
            options.maxPowerW - (options.powerHysteresisW ?? options.maxPowerW * 0.1),
            3,
          )
    this.sampler = new Sampler({
      intervalMs: options.intervalMs,
      nvidiaSmi: options.nvidiaSmi,
      procRoot: options.procRoot,
      sysfsRoot: options.sysfsRoot,
      useProcfs: process.platform === 'linux',
      env: options.env,
    })
  }

  async execute(): Promise<MonitorResult> {
    const o = this.options
    this.record({
      type: 'start',
      time: now(),
      rigfitVersion: RIGFIT_VERSION,
      command: o.command,
      cwd: o.cwd,
      logDir: o.logDir,
      planPath: o.planPath,
      intervalMs: o.intervalMs,
      options: {
        maxRestarts: o.maxRestarts,
        restartDelaySeconds: o.restartDelaySeconds,
        graceSeconds: o.graceSeconds,
        hangMinutes: o.hangMinutes,
        crashLoopFailures: o.crashLoopFailures,
        crashLoopMinutes: o.crashLoopMinutes,
        maxTempC: o.maxTempC,
        tempHysteresisC: o.tempHysteresisC,
        maxPowerW: o.maxPowerW,
        powerHysteresisW: this.powerGate === null ? null : this.powerGate.high - this.powerGate.low,
        minBatteryPercent: o.minBatteryPercent,
        totalSteps: o.totalSteps,
        metricsFile: o.metricsFile,
        overrides: o.overrides,
        actions: o.actions,
      },
    })
    this.sampler.on('sample', (sample) => this.onSample(sample))
    this.sampler.on('notice', (level, message) => this.notice(level, message))
    this.sampler.start()
    const timer = setInterval(() => this.tick(), Math.min(this.options.intervalMs, 1000))
    const removeSignals = this.options.handleSignals ? this.installSignalHandlers() : () => {}
    const killOnExit = () => this.current?.group.signal('SIGKILL')
    process.on('exit', killOnExit)
    let result: MonitorResult | null = null
    try {
      const firstSampleWait = new AbortController()
      await Promise.race([
        this.sampler.ready,
        delay(FIRST_SAMPLE_TIMEOUT_MS, undefined, { signal: firstSampleWait.signal }).catch(() => {}),
      ])
      firstSampleWait.abort()
      this.establishDevices()
      this.settings = initialSettings(o.plan, o.overrides, this.detectedDevice())
      if (this.settings === null && o.actions.oomRecovery) {
        this.notice(
          'info',
          'OOM recovery needs the batch settings: pass --plan, or --micro-batch (and --grad-accum).',
        )
      }
      result = await this.loop()
      return result
    } catch (error) {
      this.notice('error', error instanceof Error ? error.message : String(error))
      throw error
    } finally {
      clearInterval(timer)
      this.sampler.stop()
      removeSignals()
      process.off('exit', killOnExit)
      this.view.update(this.viewState())
      this.view.close()
      if (result !== null) this.finalRecords(result)
      await this.sink.close()
    }
  }

  // ── the attempt loop ────────────────────────────────────────────────────────────────────────────────

  private async loop(): Promise<MonitorResult> {
    for (;;) {
      await this.waitForGatesOpen()
      if (this.interrupted !== null) return this.interruptedBetweenAttempts('before a launch')
      const attempt = await this.runAttempt()
      const decision = this.decide(attempt.cause, attempt.exit, attempt.state)
      if (decision !== null) return decision
      await this.interruptibleDelay(this.options.restartDelaySeconds * 1000)
      if (this.interrupted !== null) return this.interruptedBetweenAttempts('before a relaunch')
    }
  }

  private interruptedBetweenAttempts(when: string): MonitorResult {
    const signal = this.interrupted ?? 'SIGINT'
    return this.result(
      'interrupted',
      exitCodeOf({ code: null, signal }),
      `stopped on ${signal} ${when}`,
      false,
    )
  }

  private async runAttempt(): Promise<{ cause: ExitCause; exit: ExitStatus; state: Attempt }> {
    const o = this.options
    this.attemptCount += 1
    const number = this.attemptCount
    let planFile: string | null = null
    if (o.plan !== null && this.settings !== null) {
      const plan = planForLaunch(o.plan, this.settings, this.notes)
      planFile = await writePlanCopy(o.logDir, number, plan)
      this.predictedBytes = plan.settings.device === 'cpu' ? null : plan.memory.perDevice.total
    }
    const rigfitEnv = {
      ...launchEnv(this.settings, number, planFile),
      ...deviceSelectionEnv(this.visibleDevices, this.vendor),
    }
    const group = ProcessGroup.spawn(o.command, {
      cwd: o.cwd,
      // Python buffers a pipe's output in blocks; metrics must arrive as they are printed.
      env: { ...o.env, PYTHONUNBUFFERED: o.env.PYTHONUNBUFFERED ?? '1', ...rigfitEnv },
      procRoot: '/proc',
    })
    const state: Attempt = {
      number,
      group,
      startedAtMs: Date.now(),
      evidence: {
        interrupted: false,
        hangKilled: false,
        deviceLost: false,
        gpuOom: false,
        deviceError: false,
      },
      lastProgressAt: this.activeSeconds(),
      sawMetrics: false,
      stopping: false,
      lastStep: null,
      lostDevices: [],
      deviceErrorIndex: null,
      reported: new Set(),
    }
    const streams: Stream[] = ['stdout', 'stderr']
    const splitters = streams.map((stream) => {
      const lines = new OutputLines((text, kind) => this.onOutput(state, stream, text, kind))
      const source = group.child[stream]
      source?.setEncoding('utf8')
      source?.on('data', (chunk: string) => {
        this.view.raw(stream, chunk)
        lines.push(chunk)
      })
      return lines
    })
    if (group.pid !== undefined) {
      this.current = state
      this.progress.startAttempt()
      this.stepTrends = new Map()
      this.timeTrends = new Map()
      this.missing.clear()
      this.record({
        type: 'launch',
        time: now(),
        attempt: number,
        pid: group.pid,
        planFile,
        settings: this.settings,
        visibleDevices: this.visibleDevices,
        env: rigfitEnv,
      })
      this.view.notify('info', `attempt ${number}: started ${o.command.join(' ')} (pid ${group.pid})`)
      if (this.pausedBy.size > 0) group.signal('SIGSTOP')
      if (this.interrupted !== null) this.stopAttempt(state, this.interrupted)
    }
    const exit = await group.exited
    if (exit.spawnError !== null) this.commandFailed(exit.spawnError, number)
    await group.reap(o.graceSeconds * 1000)
    const closeWait = new AbortController()
    await Promise.race([group.closed, delay(1000, undefined, { signal: closeWait.signal }).catch(() => {})])
    closeWait.abort()
    for (const lines of splitters) lines.flush()
    this.pollMetricsFile()
    this.current = null
    const cause = classifyExit(exit, state.evidence)
    this.record({
      type: 'exit',
      time: now(),
      attempt: number,
      code: exit.code,
      signal: exit.signal,
      cause,
      durationSeconds: (Date.now() - state.startedAtMs) / 1000,
      lastStep: state.lastStep,
    })
    return { cause, exit, state }
  }

  private commandFailed(error: NodeJS.ErrnoException, attempt: number): never {
    const command = this.options.command[0] ?? ''
    if (error.code === 'ENOENT') {
      throw new RigfitError(
        'input',
        'E_COMMAND_NOT_FOUND',
        `cannot run "${command}" (attempt ${attempt}): not found`,
        {
          suggestion: 'Check the spelling, or give the full path of the program after --.',
        },
      )
    }
    throw new RigfitError(
      'input',
      'E_COMMAND_START',
      `cannot run "${command}" (attempt ${attempt}): ${error.code ?? error.message}`,
      {
        suggestion:
          error.code === 'EACCES'
            ? `Make it executable (chmod +x ${command}) or run it through its interpreter.`
            : undefined,
      },
    )
  }

  /** What to do after an attempt ended: null to relaunch (settings already updated), or the final result. */
  private decide(cause: ExitCause, exit: ExitStatus, state: Attempt): MonitorResult | null {
    const childCode = exitCodeOf(exit)
    if (cause === 'success') return this.result('completed', 0, 'the trainer finished', false)
    if (cause === 'interrupted') {
      return this.result(
        'interrupted',
        childCode,
        `stopped on ${this.interrupted ?? 'a signal'}; the trainer exited with ${describeExit(exit)}`,
        false,
      )
    }
    this.failures += 1
    const what = describeCause(cause, exit)
    const next = this.nextLaunch(cause, state, what, childCode)
    if ('exitCode' in next) return next
    if (this.restarts >= this.options.maxRestarts) {
      return this.stopByMonitor(
        'retry-limit',
        `${what}; the retry limit is reached (--max-restarts ${this.options.maxRestarts})`,
        'Look at the trainer output recorded in the log; raise --max-restarts to allow more relaunches.',
      )
    }
    if (next.changed) this.crashLoop.reset()
    else if (this.crashLoop.record(Date.now())) {
      return this.stopByMonitor(
        'crash-loop',
        `${what}; crash loop: ${this.crashLoop.count} failures with the same settings within ${this.options.crashLoopMinutes} min`,
        'The same launch keeps failing: fix the cause shown in the trainer output before relaunching.',
      )
    }
    this.settings = next.settings
    if (next.visible !== null) {
      this.visibleDevices = next.visible
      this.inUse = next.visible
    }
    if (next.settings !== null) this.progress.setEffectiveBatch(next.settings.effectiveBatch)
    this.notes.push(
      ...next.changes.map((change) => `attempt ${this.attemptCount + 1}: ${change} (after ${cause})`),
    )
    this.restarts += 1
    this.action(
      'relaunch',
      mapCause(cause),
      `${what}; relaunching (restart ${this.restarts} of ${this.options.maxRestarts})`,
      {
        changes: next.changes,
        settings: next.settings,
        visibleDevices: this.visibleDevices,
      },
    )
    for (const change of next.changes) this.view.notify('warning', `  ${change}`)
    this.adviseCadence()
    return null
  }

  private nextLaunch(
    cause: ExitCause,
    state: Attempt,
    what: string,
    childCode: number,
  ): Relaunch | MonitorResult {
    const o = this.options
    const same: Relaunch = { settings: this.settings, visible: null, changes: [], changed: false }
    if (cause === 'gpu-oom' || cause === 'host-oom-kill') {
      if (!o.actions.oomRecovery)
        return this.failedWithActionOff(mapCause(cause), what, 'OOM recovery', '--no-oom-recovery', childCode)
      if (this.settings === null) {
        return this.result(
          'failed',
          childCode,
          `${what}; OOM recovery needs the batch settings (pass --plan or --micro-batch)`,
          false,
        )
      }
      const step = nextOomSettings(this.settings, o.plan?.hardware.computeCapability ?? null)
      if ('exhausted' in step) {
        return this.stopByMonitor(
          'recovery-exhausted',
          `${what}; nothing left that keeps the training the same: ${step.tried.join(', ')}`,
          'Shorten the sequence, switch to LoRA/QLoRA, use an 8-bit optimizer, optimizer offload or ZeRO, or a smaller model (`rigfit plan` re-plans).',
        )
      }
      return { settings: step.settings, visible: null, changes: step.changes, changed: true }
    }
    if (cause === 'device-lost' || cause === 'device-error') {
      if (!o.actions.gpuFailover)
        return this.failedWithActionOff(mapCause(cause), what, 'GPU failover', '--no-gpu-failover', childCode)
      return this.failover(cause, state, same)
    }
    if (cause === 'hang') return same
    if (!o.actions.crashRestart)
      return this.failedWithActionOff(
        'crash',
        what,
        'relaunch after a crash',
        '--no-crash-restart',
        childCode,
      )
    return same
  }

  /** Drops the failed devices and re-plans the batch for the ones left (the CPU when none is). */
  private failover(cause: ExitCause, state: Attempt, same: Relaunch): Relaunch {
    const current = this.inUse ?? []
    let lost = state.lostDevices
    if (cause === 'device-error') {
      const logical = state.deviceErrorIndex
      const named = logical === null ? undefined : (this.visibleDevices ?? current)[logical]
      lost = named !== undefined ? [named] : current.length === 1 ? current : []
    }
    if (lost.length === 0) {
      this.notice('warning', 'The failing device could not be identified; relaunching on the same GPUs.')
      return same
    }
    const remaining = current.filter((index) => !lost.includes(index))
    if (remaining.length === 0) {
      this.notice('warning', 'No GPU is left: relaunching on the CPU, which is far slower.')
    }
    const where = remaining.length === 0 ? 'the CPU' : `GPU ${remaining.join(',')}`
    if (this.settings === null) {
      return {
        settings: null,
        visible: remaining,
        changes: [`running on ${where} without GPU ${lost.join(',')}`],
        changed: true,
      }
    }
    const replanned = replanForGpus(this.settings, remaining.length)
    return {
      settings: replanned.settings,
      visible: remaining,
      changes: [`GPU ${lost.join(',')} dropped: running on ${where}`, ...replanned.changes.slice(1)],
      changed: true,
    }
  }

  private failedWithActionOff(
    cause: MonitorCause,
    what: string,
    action: string,
    flag: string,
    childCode: number,
  ): MonitorResult {
    this.action('skipped', cause, `${what}; ${action} is switched off (${flag})`, {})
    return this.result('failed', childCode, `${what}; ${action} is switched off (${flag})`, false)
  }

  private stopByMonitor(cause: MonitorCause, reason: string, suggestion: string): MonitorResult {
    this.action('stop', cause, reason, {})
    return this.result('stopped', MONITOR_STOPPED_EXIT_CODE, reason, true, suggestion)
  }

  private result(
    outcome: MonitorResult['outcome'],
    exitCode: number,
    reason: string,
    stoppedByMonitor: boolean,
    suggestion: string | null = null,
  ): MonitorResult {
    return {
      exitCode,
      outcome,
      reason,
      stoppedByMonitor,
      suggestion,
      attempts: this.attemptCount,
      logFile: this.logFile,
    }
  }

  private finalRecords(result: MonitorResult): void {
    this.adviseCadence()
    this.record({
      type: 'summary',
      time: now(),
      outcome: result.outcome,
      exitCode: result.exitCode,
      reason: result.reason,
      attempts: result.attempts,
      lastStep: this.progress.snapshot().step,
      elapsedSeconds: (Date.now() - this.startedAtMs) / 1000,
      pausedSeconds: this.pausedMs() / 1000,
      settings: this.settings,
    })
    const level: Level =
      result.outcome === 'completed' ? 'info' : result.outcome === 'interrupted' ? 'warning' : 'error'
    this.view.notify(
      level,
      `${result.outcome}: ${result.reason} (exit code ${result.exitCode}; log: ${this.logFile})`,
    )
  }

  private adviseCadence(): void {
    const snapshot = this.progress.snapshot()
    const advice = checkpointCadence({
      stepSeconds: snapshot.stepSeconds,
      failures: this.failures,
      runSeconds: this.activeSeconds(),
      checkpointSeconds: snapshot.checkpointSeconds,
      planIntervalMinutes: this.options.plan?.checkpoints.intervalMinutes ?? null,
    })
    this.record({ type: 'advice', time: now(), topic: 'checkpoint-cadence', ...advice })
    if (this.failures > 0) this.view.notify('info', advice.message)
  }

  // ── trainer output and metrics ─────────────────────────────────────────────────────────────────────

  private onOutput(state: Attempt, stream: Stream, text: string, kind: 'line' | 'progress'): void {
    const parsed = parseTrainingLine(text)
    if (parsed !== null) this.onMetrics(state, parsed)
    if (kind !== 'line') return
    this.view.line(stream, text)
    this.record({ type: 'output', time: now(), attempt: state.number, stream, line: text })
    if (!state.sawMetrics) state.lastProgressAt = this.activeSeconds()
    const oom = matchGpuOom(text)
    if (oom !== null) {
      state.evidence.gpuOom = true
      this.detectOnce(state, 'gpu-oom', 'gpu-oom', `the trainer ran out of GPU memory ("${oom}")`, {
        line: text.trim().slice(0, 500),
      })
    }
    const device = matchDeviceError(text)
    if (device !== null) {
      state.evidence.deviceError = true
      state.deviceErrorIndex ??= device.deviceIndex
      this.detectOnce(
        state,
        'device-error',
        'device-error',
        `the trainer reports a device failure: ${device.message}`,
        {
          deviceIndex: device.deviceIndex,
        },
      )
    }
  }

  private onMetrics(
    state: Attempt,
    parsed: ParsedMetrics | { source: 'file'; metrics: TrainerMetrics },
  ): void {
    const active = this.activeSeconds()
    const update = this.progress.update(parsed.metrics, parsed.source === 'tqdm', active)
    if (update === null) return
    state.sawMetrics = true
    if (parsed.metrics.step !== undefined) state.lastStep = parsed.metrics.step
    // Progress bars redraw many times a step, and trainers repeat figures in event lines: only news counts.
    if (!update.changed) return
    state.lastProgressAt = active
    const s = this.progress.snapshot()
    this.record({
      type: 'metrics',
      time: now(),
      attempt: state.number,
      source: parsed.source,
      step: s.step,
      totalSteps: s.totalSteps,
      loss: s.loss,
      learningRate: s.learningRate,
      epoch: s.epoch,
      tokens: s.tokens,
      tokensPerSecond: s.tokensPerSecond,
      samplesPerSecond: s.samplesPerSecond,
      stepSeconds: s.stepSeconds,
      etaSeconds: s.etaSeconds,
    })
    if (update.stepAdvanced && s.step !== null)
      this.trackMemory(state, this.stepTrends, s.step, 'step', s.stepSeconds)
  }

  /**
   * Feeds each device's memory into its trend (against steps, or seconds when the trainer reports none) and
   * warns once per attempt about a leak and about an OOM the projection puts close.
   */
  private trackMemory(
    state: Attempt,
    trends: Map<string, MemoryTrend>,
    x: number,
    unit: 'step' | 'second',
    secondsPerUnit: number | null,
  ): void {
    const sample = this.latestSample
    if (sample === null) return
    const series: { key: string; label: string; used: number | null; total: number | null }[] = []
    for (const gpu of sample.gpus) {
      if (this.inUse !== null && !this.inUse.includes(gpu.index)) continue
      series.push({
        key: `gpu${gpu.index}`,
        label: `GPU${gpu.index}`,
        used: gpu.memoryUsedBytes,
        total: gpu.memoryTotalBytes,
      })
    }
    if (series.length === 0 && sample.memory !== null) {
      series.push({
        key: 'host',
        label: 'host RAM',
        used: sample.memory.usedBytes,
        total: sample.memory.totalBytes,
      })
    }
    for (const { key, label, used, total } of series) {
      if (used === null || total === null || total <= 0) continue
      let trend = trends.get(key)
      if (trend === undefined) {
        trend = new MemoryTrend()
        trends.set(key, trend)
      }
      trend.add(x, used)
      const verdict = trend.verdict(total)
      if (verdict === null || !verdict.leaking || verdict.unitsToCapacity === null) continue
      const seconds = secondsPerUnit === null ? null : verdict.unitsToCapacity * secondsPerUnit
      const perUnit = `${formatGiB(verdict.slope * (unit === 'step' ? 100 : 60))} GiB per ${unit === 'step' ? '100 steps' : 'minute'}`
      const when =
        unit === 'step'
          ? `around step ${Math.round(x + verdict.unitsToCapacity)}${seconds !== null ? ` (in ${formatDuration(seconds)})` : ''}`
          : `in ${formatDuration(seconds)}`
      const details = {
        device: label,
        slopeBytesPerUnit: verdict.slope,
        unit,
        r2: verdict.r2,
        points: verdict.points,
        usedBytes: verdict.currentBytes,
        capacityBytes: verdict.capacityBytes,
        projectedOomIn: { [unit === 'step' ? 'steps' : 'seconds']: verdict.unitsToCapacity, seconds },
        projectedOomAt: seconds === null ? null : new Date(Date.now() + seconds * 1000).toISOString(),
      }
      this.detectOnce(
        state,
        `leak:${key}`,
        'memory-leak',
        `${label} memory rises steadily (${perUnit}, r²=${verdict.r2.toFixed(2)}): out of memory ${when}`,
        details,
      )
      const unitsSoon = unit === 'step' ? 10 : 120
      const imminent = verdict.unitsToCapacity <= unitsSoon || (seconds !== null && seconds <= 120)
      if (imminent)
        this.detectOnce(
          state,
          `imminent:${key}`,
          'oom-imminent',
          `${label} is projected to run out of memory ${when}`,
          details,
        )
    }
  }

  private pollMetricsFile(): void {
    const state = this.current
    if (this.metricsTail === null || state === null) return
    for (const line of this.metricsTail.poll()) {
      const parsed = parseTrainingLine(line)
      if (parsed !== null && parsed.source !== 'tqdm')
        this.onMetrics(state, { source: 'file', metrics: parsed.metrics })
    }
  }

  // ── samples: devices, gates, memory ────────────────────────────────────────────────────────────────

  /**
   * The GPUs the run uses: CUDA_VISIBLE_DEVICES when it lists indexes; none when the plan trains on the CPU;
   * the first `plan.settings.gpus` when the plan asks for fewer than there are; otherwise all that answered.
   */
  private establishDevices(): void {
    const sample = this.latestSample
    if (sample === null || sample.gpus.length === 0) {
      this.inUse = this.visibleDevices
      return
    }
    this.vendor = sample.gpus[0]?.vendor ?? null
    const plan = this.options.plan
    const all = sample.gpus.map((gpu) => gpu.index)
    if (this.visibleDevices !== null) this.inUse = this.visibleDevices
    else if (plan?.settings.device === 'cpu') this.inUse = []
    else if (plan !== null && plan.settings.gpus > 0 && plan.settings.gpus < all.length)
      this.inUse = all.slice(0, plan.settings.gpus)
    else this.inUse = all
  }

  private detectedDevice(): { device: LaunchSettings['device']; gpus: number } {
    const count = this.inUse?.length ?? 0
    if (count === 0) return { device: 'cpu', gpus: 0 }
    return { device: this.vendor === 'amd' ? 'rocm' : 'cuda', gpus: count }
  }

  private onSample(sample: Sample): void {
    this.latestSample = sample
    // GPUs that answered only after the first launch (a slow nvidia-smi start) are adopted when they appear.
    if (this.inUse === null && sample.gpusFresh && sample.gpus.length > 0) this.establishDevices()
    const state = this.current
    this.record({
      type: 'sample',
      time: sample.time.toISOString(),
      attempt: state?.number ?? null,
      gpus: sample.gpus.map((gpu) => ({
        ...gpu,
        predictedBytes: this.inUse === null || this.inUse.includes(gpu.index) ? this.predictedBytes : null,
      })),
      cpu: sample.cpu,
      memory: sample.memory,
      battery: sample.battery,
      paused: this.pausedBy.size > 0,
    })
    this.updateGates(sample)
    if (state !== null && !state.stopping) {
      this.checkDevices(state, sample)
      this.checkAbovePlan(state, sample)
      if (!this.progress.hasStep) this.trackMemory(state, this.timeTrends, this.activeSeconds(), 'second', 1)
    }
    this.view.update(this.viewState())
  }

  private inUseReadings(sample: Sample) {
    return sample.gpus.filter((gpu) => this.inUse === null || this.inUse.includes(gpu.index))
  }

  private updateGates(sample: Sample): void {
    const gpus = sample.gpusFresh ? this.inUseReadings(sample) : []
    const temps = gpus.map((gpu) => gpu.temperatureC).filter((t): t is number => t !== null)
    const hottest = temps.length > 0 ? Math.max(...temps) : null
    const hottestGpu = gpus.find((gpu) => gpu.temperatureC === hottest)
    const thermal = this.thermalGate.update(hottest)
    if (thermal !== null) {
      const o = this.options
      const reading = {
        device: hottestGpu ? `GPU${hottestGpu.index}` : null,
        temperatureC: hottest,
        maxTempC: o.maxTempC,
        resumeBelowC: this.thermalGate.low,
      }
      if (thermal === 'close') {
        this.gateClosed(
          'temperature',
          o.actions.thermal,
          '--no-thermal',
          `${reading.device} at ${hottest}°C is above --max-temp ${o.maxTempC}°C`,
          reading,
        )
      } else {
        this.resumeFor(
          'temperature',
          `${reading.device} cooled to ${hottest}°C, below ${this.thermalGate.low}°C (--max-temp ${o.maxTempC} − --temp-hysteresis ${o.tempHysteresisC})`,
          reading,
        )
      }
    }
    if (this.powerGate !== null) {
      const draws = gpus.map((gpu) => gpu.powerWatts).filter((w): w is number => w !== null)
      const total = draws.length > 0 ? draws.reduce((sum, w) => sum + w, 0) : null
      const power = this.powerGate.update(total)
      const reading = { powerWatts: total, maxPowerW: this.powerGate.high, resumeBelowW: this.powerGate.low }
      if (power === 'close') {
        this.gateClosed(
          'power',
          this.options.actions.thermal,
          '--no-thermal',
          `GPU power ${Math.round(total ?? 0)} W is above --max-power ${this.powerGate.high} W`,
          reading,
        )
      } else if (power === 'open') {
        this.resumeFor(
          'power',
          `GPU power fell to ${Math.round(total ?? 0)} W, below ${this.powerGate.low} W`,
          reading,
        )
      }
    }
    this.updateBattery(sample)
  }

  private updateBattery(sample: Sample): void {
    const battery = sample.battery
    if (battery === null) return
    const o = this.options
    if (battery.onBattery && !this.onBattery) {
      this.detection(
        this.current,
        'on-battery',
        `running on battery (${battery.percent ?? '?'}% charge): training drains it fast`,
        { ...battery },
      )
    }
    this.onBattery = battery.onBattery
    const low = battery.onBattery && battery.percent !== null && battery.percent < o.minBatteryPercent
    if (low && !this.pausedBy.has('battery') && !this.batteryLowReported) {
      this.batteryLowReported = true
      this.gateClosed(
        'battery',
        o.actions.battery,
        '--no-battery',
        `battery at ${battery.percent}% is below --min-battery ${o.minBatteryPercent}%`,
        { ...battery, minBatteryPercent: o.minBatteryPercent },
      )
    }
    if (!battery.onBattery) {
      this.batteryLowReported = false
      this.resumeFor('battery', `back on AC power (battery ${battery.percent ?? '?'}%)`, { ...battery })
    }
  }

  /** A limit was crossed: pause, or say that the pause is switched off. */
  private gateClosed(
    cause: PauseCause,
    enabled: boolean,
    flag: string,
    reason: string,
    details: Record<string, unknown>,
  ): void {
    this.detection(this.current, cause, reason, details, false)
    if (!enabled) {
      this.action('skipped', cause, `${reason}; pausing is switched off (${flag})`, details)
      return
    }
    if (this.pausedBy.has(cause)) return
    if (this.pausedBy.size === 0) {
      this.pausedSinceMs = Date.now()
      this.current?.group.signal('SIGSTOP')
    }
    this.pausedBy.set(cause, reason)
    this.action('pause', cause, `${reason}: trainer paused (SIGSTOP)`, {
      ...details,
      running: this.current !== null,
    })
    this.view.notify('warning', `paused: ${reason}`)
  }

  private resumeFor(cause: PauseCause, reason: string, details: Record<string, unknown>): void {
    if (!this.pausedBy.delete(cause)) return
    if (this.pausedBy.size === 0) {
      this.pausedTotalMs += Date.now() - (this.pausedSinceMs ?? Date.now())
      this.pausedSinceMs = null
      this.current?.group.signal('SIGCONT')
      this.wake?.()
    }
    const still = [...this.pausedBy.values()]
    this.action(
      'resume',
      cause,
      `${reason}${still.length > 0 ? `; still paused: ${still.join('; ')}` : ': trainer resumed (SIGCONT)'}`,
      details,
    )
    this.view.notify('info', `resumed: ${reason}`)
  }

  /** A device the run uses missing from two fresh sweeps in a row is gone: stop the attempt and fail over. */
  private checkDevices(state: Attempt, sample: Sample): void {
    for (const problem of sample.problems) {
      this.detectOnce(state, `tool:${problem}`, 'device-error', `nvidia-smi: ${problem}`, { line: problem })
    }
    if (!sample.gpusFresh || this.inUse === null || this.inUse.length === 0) return
    const present = new Set(sample.gpus.map((gpu) => gpu.index))
    for (const index of this.inUse)
      this.missing.set(index, present.has(index) ? 0 : (this.missing.get(index) ?? 0) + 1)
    const lost = this.inUse.filter((index) => (this.missing.get(index) ?? 0) >= 2)
    if (lost.length === 0 || state.reported.has('device-lost')) return
    state.reported.add('device-lost')
    const reason = `GPU ${lost.join(',')} disappeared from the samples`
    this.detection(state, 'device-lost', reason, { lost, inUse: this.inUse }, false)
    if (!this.options.actions.gpuFailover) {
      this.action('skipped', 'device-lost', `${reason}; GPU failover is switched off (--no-gpu-failover)`, {})
      return
    }
    state.evidence.deviceLost = true
    state.lostDevices = lost
    this.action('kill', 'device-lost', `${reason}: stopping the trainer to relaunch without it`, { lost })
    this.stopAttempt(state, 'SIGTERM')
  }

  private checkAbovePlan(state: Attempt, sample: Sample): void {
    if (this.predictedBytes === null || !sample.gpusFresh) return
    for (const gpu of this.inUseReadings(sample)) {
      const used = gpu.memoryUsedBytes
      if (used === null || used <= this.predictedBytes * MEMORY_ABOVE_PLAN_FRACTION) continue
      const over = Math.round((used / this.predictedBytes - 1) * 100)
      this.noticeOnce(
        state,
        `above-plan:${gpu.index}`,
        `GPU${gpu.index} uses ${formatGiB(used)} GiB, ${over}% more than the plan's ${formatGiB(this.predictedBytes)} GiB`,
      )
    }
  }

  // ── timer: hang, metrics file, descendants, view ───────────────────────────────────────────────────

  private tick(): void {
    const state = this.current
    if (state !== null && !state.stopping) {
      this.pollMetricsFile()
      if (Date.now() - this.lastTrackMs >= TRACK_DESCENDANTS_MS) {
        this.lastTrackMs = Date.now()
        state.group.trackDescendants()
      }
      const idleSeconds = this.activeSeconds() - state.lastProgressAt
      if (
        this.pausedBy.size === 0 &&
        idleSeconds >= this.options.hangMinutes * 60 &&
        !state.reported.has('hang')
      ) {
        state.reported.add('hang')
        const reason = `no progress for ${formatDuration(idleSeconds)} (--hang-minutes ${this.options.hangMinutes})`
        this.detection(state, 'hang', reason, { idleSeconds, lastStep: state.lastStep }, false)
        if (this.options.actions.hangRestart) {
          state.evidence.hangKilled = true
          this.action('kill', 'hang', `${reason}: stopping the trainer to relaunch it`, {})
          this.stopAttempt(state, 'SIGTERM')
        } else {
          this.action(
            'skipped',
            'hang',
            `${reason}; relaunching a hung trainer is switched off (--no-hang-restart)`,
            {},
          )
        }
      }
    }
    this.view.update(this.viewState())
  }

  private stopAttempt(state: Attempt, signal: NodeJS.Signals): void {
    state.stopping = true
    void state.group.terminate(signal, this.options.graceSeconds * 1000)
  }

  // ── signals ────────────────────────────────────────────────────────────────────────────────────────

  private installSignalHandlers(): () => void {
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
    const handlers = signals.map((signal) => {
      const handler = () => this.onSignal(signal)
      process.on(signal, handler)
      return [signal, handler] as const
    })
    return () => {
      for (const [signal, handler] of handlers) process.off(signal, handler)
    }
  }

  /** First signal: forward it to the trainer's group, then SIGTERM and SIGKILL after grace periods. Second: hurry. */
  private onSignal(signal: NodeJS.Signals): void {
    const state = this.current
    if (this.interrupted !== null) {
      this.view.notify('warning', `${signal} again: skipping the grace period`)
      if (state !== null) void state.group.terminate(signal, this.options.graceSeconds * 1000)
      return
    }
    this.interrupted = signal
    const grace = this.options.graceSeconds
    this.action(
      'stop',
      'interrupt',
      `received ${signal}: stopping the trainer (${signal}, then SIGTERM after ${grace} s, then SIGKILL)`,
      {
        signal,
      },
    )
    this.view.notify(
      'warning',
      `${signal}: stopping the trainer (press Ctrl-C again to skip the ${grace} s grace period)`,
    )
    if (this.pausedBy.size > 0) {
      this.pausedTotalMs += Date.now() - (this.pausedSinceMs ?? Date.now())
      this.pausedSinceMs = null
      this.pausedBy.clear()
    }
    this.wake?.()
    if (state !== null) {
      state.evidence.interrupted = true
      this.stopAttempt(state, signal)
    }
  }

  // ── waiting ────────────────────────────────────────────────────────────────────────────────────────

  private async waitForGatesOpen(): Promise<void> {
    if (this.pausedBy.size === 0 || this.interrupted !== null) return
    this.action(
      'wait',
      [...this.pausedBy.keys()][0] ?? 'temperature',
      `waiting to launch: ${[...this.pausedBy.values()].join('; ')}`,
      {},
    )
    while (this.pausedBy.size > 0 && this.interrupted === null) {
      await this.interruptibleDelay(60_000)
    }
  }

  private async interruptibleDelay(ms: number): Promise<void> {
    if (ms <= 0) return
    const controller = new AbortController()
    this.wake = () => controller.abort()
    try {
      await delay(ms, undefined, { signal: controller.signal })
    } catch {
      // woken early
    } finally {
      this.wake = null
    }
  }

  // ── records ────────────────────────────────────────────────────────────────────────────────────────

  private record(record: MonitorRecord): void {
    this.sink.write(record)
  }

  /** Records what was noticed; `notify` is off when an action record (which prints) follows at once. */
  private detection(
    state: Attempt | null,
    cause: MonitorCause,
    message: string,
    details: Record<string, unknown>,
    notify = true,
  ): void {
    this.record({ type: 'detection', time: now(), attempt: state?.number ?? null, cause, message, details })
    if (notify) this.view.notify('warning', message)
  }

  private detectOnce(
    state: Attempt,
    key: string,
    cause: MonitorCause,
    message: string,
    details: Record<string, unknown>,
  ): void {
    if (state.reported.has(key)) return
    state.reported.add(key)
    this.detection(state, cause, message, details)
  }

  private action(
    action: MonitorRecordOf<'action'>['action'],
    cause: MonitorCause,
    reason: string,
    details: Record<string, unknown>,
  ): void {
    this.record({
      type: 'action',
      time: now(),
      attempt: this.current?.number ?? (this.attemptCount || null),
      action,
      cause,
      reason,
      details,
    })
    if (action === 'relaunch' || action === 'stop' || action === 'kill' || action === 'skipped') {
      this.view.notify(action === 'stop' && cause !== 'interrupt' ? 'error' : 'warning', reason)
    }
  }

  private notice(level: 'info' | 'warning' | 'error', message: string): void {
    this.record({ type: 'notice', time: now(), level, message })
    this.view.notify(level, message)
  }

  private noticeOnce(state: Attempt, key: string, message: string): void {
    if (state.reported.has(key)) return
    state.reported.add(key)
    this.notice('warning', message)
  }

  // ── clocks and view ────────────────────────────────────────────────────────────────────────────────

  private pausedMs(): number {
    return this.pausedTotalMs + (this.pausedSinceMs === null ? 0 : Date.now() - this.pausedSinceMs)
  }

  /** Seconds since start with pauses taken out: rates, ETA and hang detection run on this clock. */
  private activeSeconds(): number {
    return (Date.now() - this.startedAtMs - this.pausedMs()) / 1000
  }

  private viewState(): ViewState {
    return {
      command: this.options.command,
      attempt: this.attemptCount,
      maxAttempts: this.options.maxRestarts + 1,
      elapsedSeconds: (Date.now() - this.startedAtMs) / 1000,
      pausedBy: [...this.pausedBy.values()],
      sample: this.latestSample,
      predictedBytes: this.predictedBytes,
      inUse: this.inUse,
      progress: this.progress.snapshot(),
      settings: this.settings,
    }
  }
}

function now(): string {
  return new Date().toISOString()
}

/** The shell's convention: a signal death reads as 128 + the signal number. */
export function exitCodeOf(exit: ExitStatus): number {
  if (exit.code !== null) return exit.code
  if (exit.signal !== null) return 128 + (osConstants.signals[exit.signal] ?? 0)
  return 1
}

function describeExit(exit: ExitStatus): string {
  return exit.signal !== null ? exit.signal : `exit code ${exit.code}`
}

function describeCause(cause: ExitCause, exit: ExitStatus): string {
  switch (cause) {
    case 'gpu-oom':
      return `the trainer ran out of GPU memory (${describeExit(exit)})`
    case 'host-oom-kill':
      return `the trainer was killed by SIGKILL (${describeExit(exit)}), most likely by the kernel's OOM killer`
    case 'device-lost':
      return 'a GPU disappeared'
    case 'device-error':
      return `the trainer reported a device failure (${describeExit(exit)})`
    case 'hang':
      return 'the trainer made no progress'
    default:
      return `the trainer failed (${describeExit(exit)})`
  }
}

function mapCause(cause: ExitCause): MonitorCause {
  return cause === 'success' || cause === 'interrupted' ? 'crash' : cause
}
