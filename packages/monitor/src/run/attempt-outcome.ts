import type { ExitCause, MonitorCause } from '@rigfit/core'
import { checkpointCadence } from '../act/checkpoint-cadence.js'
import { type ExitStatus, exitCodeOf } from '../detect/classify-exit.js'
import { CrashLoopGuard } from '../detect/crash-loop.js'
import { hostCpuHasBf16 } from '../sampling/host-cpu-device.js'
import type { Level } from '../view/monitor-view.js'
import type { Attempt } from './attempt.js'
import { MONITOR_STOPPED_EXIT_CODE, type MonitorResult } from './monitor-result.js'
import { describeExit, describeFailure, planRelaunch } from './relaunch-plan.js'
import type { RunContext } from './run-context.js'

/**
 * What follows an attempt: the run's result (finished, failed, interrupted, stopped by the monitor), or a
 * relaunch with the settings the failure calls for, within --max-restarts and short of a crash loop; and the
 * run's closing records.
 */
export class AttemptOutcome {
  private readonly crashLoop: CrashLoopGuard

  constructor(
    private readonly run: RunContext,
    private readonly logFile: string,
  ) {
    this.crashLoop = new CrashLoopGuard({
      failures: run.options.crashLoopFailures,
      windowMs: run.options.crashLoopMinutes * 60_000,
    })
  }

  /** After an attempt: null to relaunch (settings already updated), or the run's result. */
  decide(cause: ExitCause, exit: ExitStatus, state: Attempt): MonitorResult | null {
    const { options: o, state: run, recorder } = this.run
    if (cause === 'success') return this.result('completed', 0, 'the trainer finished', false)
    if (cause === 'interrupted') {
      const reason = `stopped on ${run.interrupted ?? 'a signal'}; the trainer exited with ${describeExit(exit)}`
      // A trainer that exited by itself (after saving) gives its own code; one that had to be ended by a
      // signal, even SIGKILL after the grace periods, gives 128 + the signal the monitor received: 130 for Ctrl-C.
      const code = exit.code ?? exitCodeOf({ code: null, signal: run.interrupted ?? exit.signal })
      return this.result('interrupted', code, reason, false)
    }
    if (cause === 'gpu-oom' || cause === 'host-oom-kill') run.oomFailures += 1
    else run.failures += 1
    const plan = planRelaunch({
      cause,
      exit,
      actions: o.actions,
      settings: run.settings,
      computeCapability: o.plan?.hardware.computeCapability ?? null,
      cpuBf16: run.settings?.device === 'cpu' && hostCpuHasBf16(o.procRoot),
      inUse: run.inUse ?? [],
      visibleDevices: run.visibleDevices,
      lostDevices: state.lostDevices,
      deviceErrorIndex: state.deviceErrorIndex,
    })
    if (plan.kind === 'fail') {
      if (plan.skipped !== null) recorder.action('skipped', plan.skipped.cause, plan.skipped.reason, {})
      return this.result('failed', exitCodeOf(exit), plan.reason, false)
    }
    if (plan.kind === 'stop') return this.stopByMonitor(plan.cause, plan.reason, plan.suggestion)
    const what = describeFailure(cause, exit)
    if (run.restarts >= o.maxRestarts) {
      return this.stopByMonitor(
        'retry-limit',
        `${what}; the retry limit is reached (--max-restarts ${o.maxRestarts})`,
        'Look at the trainer output recorded in the log; raise --max-restarts to allow more relaunches.',
      )
    }
    if (plan.changed) this.crashLoop.reset()
    else if (this.crashLoop.record(this.run.clock.nowMs())) {
      return this.stopByMonitor(
        'crash-loop',
        `${what}; crash loop: ${this.crashLoop.count} failures with the same settings within ${o.crashLoopMinutes} min`,
        'The same launch keeps failing: fix the cause shown in the trainer output before relaunching.',
      )
    }
    for (const warning of plan.warnings) recorder.notice('warning', warning)
    run.settings = plan.settings
    if (plan.visible !== null) {
      run.visibleDevices = plan.visible
      run.inUse = plan.visible
    }
    if (plan.settings !== null) this.run.progress.setEffectiveBatch(plan.settings.effectiveBatch)
    run.notes.push(
      ...plan.changes.map((change) => `attempt ${run.attemptCount + 1}: ${change} (after ${cause})`),
    )
    run.restarts += 1
    recorder.action('relaunch', cause, `${what}; relaunching (restart ${run.restarts} of ${o.maxRestarts})`, {
      changes: plan.changes,
      settings: plan.settings,
      visibleDevices: run.visibleDevices,
    })
    for (const change of plan.changes) this.run.view.notify('warning', `  ${change}`)
    this.adviseCadence()
    return null
  }

  /** A stop signal arrived while no trainer ran (`when`: before a launch, before a relaunch). */
  interruptedBetweenAttempts(when: string): MonitorResult {
    const signal = this.run.state.interrupted ?? 'SIGINT'
    return this.result(
      'interrupted',
      exitCodeOf({ code: null, signal }),
      `stopped on ${signal} ${when}`,
      false,
    )
  }

  /** The closing records: the cadence advice and the summary, and the final line for the user. */
  finish(result: MonitorResult): void {
    const { clock, progress, state } = this.run
    this.adviseCadence()
    this.run.recorder.record({
      type: 'summary',
      time: clock.iso(),
      outcome: result.outcome,
      exitCode: result.exitCode,
      reason: result.reason,
      attempts: result.attempts,
      lastStep: progress.snapshot().step,
      elapsedSeconds: clock.elapsedSeconds(),
      pausedSeconds: clock.pausedSeconds(),
      settings: state.settings,
    })
    const level: Level =
      result.outcome === 'completed' ? 'info' : result.outcome === 'interrupted' ? 'warning' : 'error'
    this.run.view.notify(
      level,
      `${result.outcome}: ${result.reason} (exit code ${result.exitCode}; log: ${this.logFile})`,
    )
  }

  private stopByMonitor(cause: MonitorCause, reason: string, suggestion: string): MonitorResult {
    // The suggestion goes into the log too: after a run stopped on the OOM ladder it is the way forward.
    this.run.recorder.action('stop', cause, reason, { suggestion })
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
      attempts: this.run.state.attemptCount,
      logFile: this.logFile,
    }
  }

  private adviseCadence(): void {
    const { progress, state, options, clock } = this.run
    const snapshot = progress.snapshot()
    const advice = checkpointCadence({
      stepSeconds: snapshot.stepSeconds,
      failures: state.failures,
      oomFailures: state.oomFailures,
      runSeconds: clock.activeSeconds(),
      checkpointSeconds: snapshot.checkpointSeconds,
      planIntervalMinutes: options.plan?.checkpoints.intervalMinutes ?? null,
    })
    this.run.recorder.record({ type: 'advice', time: clock.iso(), topic: 'checkpoint-cadence', ...advice })
    if (state.failures + state.oomFailures > 0) this.run.view.notify('info', advice.message)
  }
}
