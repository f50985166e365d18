import { join } from 'node:path'
import { RIGFIT_VERSION } from '@rigfit/core'
import { initialSettings, parseVisibleDevices } from './act/launch-settings.js'
import { TrainingProgress } from './metrics/training-progress.js'
import type { MonitorOptions } from './options.js'
import { runLogFileName } from './record/node-log.js'
import { RecordSink } from './record/record-sink.js'
import { AttemptOutcome } from './run/attempt-outcome.js'
import { DeviceWatch } from './run/device-watch.js'
import { AttemptLauncher } from './run/launch-attempt.js'
import { LimitPause } from './run/limit-pause.js'
import type { MonitorResult } from './run/monitor-result.js'
import { PeriodicChecks } from './run/periodic-checks.js'
import { RunClock } from './run/run-clock.js'
import { initialRunState, type RunContext } from './run/run-context.js'
import { RunRecorder } from './run/run-recorder.js'
import { SignalStop } from './run/signal-stop.js'
import { TrainerOutput } from './run/trainer-output.js'
import { WakeableSleep } from './run/wakeable-sleep.js'
import { resolveRuntime, type SampleSource } from './runtime/monitor-runtime.js'
import { createView, type ViewIo } from './view/monitor-view.js'
import type { ViewState } from './view/status-text.js'
import { PauseState } from './watch/pause-state.js'

/** How long the first launch waits for the first sample, to know which GPUs the run uses. */
const FIRST_SAMPLE_TIMEOUT_MS = 3000

/**
 * One supervised run: launches the trainer, samples the machine, reads the trainer's metrics, detects trouble,
 * acts (pause, resume, relaunch with adjusted settings, stop) and records every step with its reason. This
 * class wires the parts together and runs the attempts in turn; each part does one job (see run/).
 */
export class MonitorRun {
  private readonly run: RunContext
  private readonly logFile: string
  private readonly sink: RecordSink
  private readonly sampler: SampleSource
  private readonly output: TrainerOutput
  private readonly limits: LimitPause
  private readonly devices: DeviceWatch
  private readonly launcher: AttemptLauncher
  private readonly outcome: AttemptOutcome
  private readonly checks: PeriodicChecks
  private readonly signals: SignalStop

  constructor(options: MonitorOptions, io: ViewIo) {
    const runtime = resolveRuntime(options.runtime)
    const pause = new PauseState()
    const clock = new RunClock(runtime.clock, pause)
    this.logFile = join(options.logDir, runLogFileName(options.node ?? null))
    const view = createView(options.view, io, options.statusSeconds, runtime.clock)
    this.sink = RecordSink.open(this.logFile, {
      force: options.force,
      maxBytes: options.maxLogMb > 0 ? Math.round(options.maxLogMb * 1024 * 1024) : null,
      jsonOut: options.view === 'json' ? io.stdout : null,
      onFileError: (error) =>
        view.notify('error', `cannot write ${this.logFile} (${error.message}); the run goes on unrecorded`),
    })
    const state = initialRunState(parseVisibleDevices(options.env.CUDA_VISIBLE_DEVICES))
    const plan = options.plan
    const recorder = new RunRecorder(
      this.sink,
      view,
      clock,
      () => state.current?.number ?? (state.attemptCount > 0 ? state.attemptCount : null),
    )
    this.run = {
      options,
      runtime,
      state,
      clock,
      pause,
      progress: new TrainingProgress({
        effectiveBatch: plan?.settings.effectiveBatch ?? null,
        seq: plan?.settings.seq ?? null,
        totalStepsOverride: options.totalSteps,
        totalStepsFromPlan: plan !== null && plan.time.steps > 0 ? plan.time.steps : null,
      }),
      recorder,
      view,
      sleeper: new WakeableSleep(runtime.timers),
      refreshView: () => view.update(this.viewState()),
    }
    this.output = new TrainerOutput(this.run)
    this.limits = new LimitPause(this.run)
    this.devices = new DeviceWatch(this.run, this.limits)
    this.launcher = new AttemptLauncher(this.run, this.output, this.devices)
    this.outcome = new AttemptOutcome(this.run, this.logFile)
    this.checks = new PeriodicChecks(this.run, this.output)
    this.signals = new SignalStop(this.run)
    this.sampler = runtime.createSampler({
      intervalMs: options.intervalMs,
      nvidiaSmi: options.nvidiaSmi,
      procRoot: options.procRoot,
      sysfsRoot: options.sysfsRoot,
      useProcfs: runtime.process.platform === 'linux',
      env: options.env,
    })
  }

  async execute(): Promise<MonitorResult> {
    const { runtime, recorder, state, options } = this.run
    this.recordStart()
    this.sampler.on('sample', (sample) => this.devices.onSample(sample))
    this.sampler.on('notice', (level, message) => recorder.notice(level, message))
    this.sampler.start()
    const timer = runtime.timers.setInterval(() => this.checks.tick(), this.checks.periodMs)
    const removeSignals = options.handleSignals ? this.signals.install() : () => {}
    // Last resort: the monitor dying of an exception must not leave the trainer running unsupervised.
    const killOnExit = () => state.current?.group.signal('SIGKILL')
    runtime.process.on('exit', killOnExit)
    let result: MonitorResult | null = null
    try {
      await this.run.sleeper.sleep(FIRST_SAMPLE_TIMEOUT_MS, this.sampler.ready)
      this.devices.establishDevices()
      state.settings = initialSettings(options.plan, options.overrides, this.devices.detectedDevice())
      if (state.settings === null && options.actions.oomRecovery) {
        recorder.notice(
          'info',
          'OOM recovery needs the batch settings: pass --plan, or --micro-batch (and --grad-accum).',
        )
      }
      result = await this.attempts()
      return result
    } catch (error) {
      recorder.notice('error', error instanceof Error ? error.message : String(error))
      throw error
    } finally {
      runtime.timers.clearInterval(timer)
      const samplerStopped = this.sampler.stop()
      removeSignals()
      runtime.process.off('exit', killOnExit)
      recorder.tellHeldBack()
      this.run.refreshView()
      this.run.view.close()
      if (result !== null) this.outcome.finish(result)
      await this.sink.close()
      await samplerStopped
    }
  }

  private recordStart(): void {
    const o = this.run.options
    this.run.recorder.record({
      type: 'start',
      time: this.run.clock.iso(),
      rigfitVersion: RIGFIT_VERSION,
      command: o.command,
      cwd: o.cwd,
      logDir: o.logDir,
      planPath: o.planPath,
      plannedTokensPerSecond: o.plan?.throughput.tokensPerSecond ?? null,
      intervalMs: o.intervalMs,
      options: {
        maxRestarts: o.maxRestarts,
        maxLogMb: o.maxLogMb,
        restartDelaySeconds: o.restartDelaySeconds,
        graceSeconds: o.graceSeconds,
        hangMinutes: o.hangMinutes,
        crashLoopFailures: o.crashLoopFailures,
        crashLoopMinutes: o.crashLoopMinutes,
        maxTempC: o.maxTempC,
        tempHysteresisC: o.tempHysteresisC,
        maxPowerW: o.maxPowerW,
        powerHysteresisW: this.limits.powerHysteresisW,
        minBatteryPercent: o.minBatteryPercent,
        totalSteps: o.totalSteps,
        metricsFile: o.metricsFile,
        overrides: o.overrides,
        actions: o.actions,
      },
    })
  }

  /** Launches, waits, decides; again until a result. */
  private async attempts(): Promise<MonitorResult> {
    const { state, sleeper, options } = this.run
    for (;;) {
      await this.limits.waitWhilePaused()
      if (state.interrupted !== null) return this.outcome.interruptedBetweenAttempts('before a launch')
      const { cause, exit, state: attempt } = await this.launcher.launch()
      const result = this.outcome.decide(cause, exit, attempt)
      if (result !== null) return result
      await sleeper.sleep(options.restartDelaySeconds * 1000)
      if (state.interrupted !== null) return this.outcome.interruptedBetweenAttempts('before a relaunch')
    }
  }

  private viewState(): ViewState {
    const { options, state, clock, pause, progress } = this.run
    return {
      command: options.command,
      attempt: state.attemptCount,
      maxAttempts: options.maxRestarts + 1,
      elapsedSeconds: clock.elapsedSeconds(),
      pausedBy: pause.why(),
      sample: state.latestSample,
      predictedBytes: state.predictedBytes,
      inUse: state.inUse,
      progress: progress.snapshot(),
      settings: state.settings,
    }
  }
}
