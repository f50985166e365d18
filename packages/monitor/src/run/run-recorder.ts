import type { MonitorCause, MonitorRecord, MonitorRecordOf } from '@rigfit/core'
import type { RecordSink } from '../record/record-sink.js'
import type { MonitorView } from '../view/monitor-view.js'
import type { MemoryFinding } from '../watch/memory-watch.js'
import type { Attempt } from './attempt.js'
import { RepeatLimit } from './repeat-limit.js'
import type { RunClock } from './run-clock.js'

/**
 * Writes the run's records (to the log, and to stdout with --json) and tells the user what matters: every
 * detection, action and notice goes through here, each stamped with the run's clock.
 */
export class RunRecorder {
  private readonly repeats = new RepeatLimit()

  constructor(
    private readonly sink: RecordSink,
    private readonly view: MonitorView,
    private readonly clock: RunClock,
    /** The attempt an action belongs to: the running one, else the last one, else none. */
    private readonly actionAttempt: () => number | null,
  ) {}

  record(record: MonitorRecord): void {
    this.sink.write(record)
  }

  /** Records what was noticed; `notify` is off when an action record (which prints) follows at once. */
  detection(
    state: Attempt | null,
    cause: MonitorCause,
    message: string,
    details: Record<string, unknown>,
    notify = true,
  ): void {
    this.record({
      type: 'detection',
      time: this.clock.iso(),
      attempt: state?.number ?? null,
      cause,
      message,
      details,
    })
    if (notify) this.view.notify('warning', message)
  }

  /**
   * A detection reported at most once per attempt under `key`; with `kind`, only the first few of that kind in
   * the run are recorded and told, the others counted (see tellHeldBack).
   */
  detectOnce(
    state: Attempt,
    key: string,
    cause: MonitorCause,
    message: string,
    details: Record<string, unknown>,
    kind?: { name: string; label: string },
  ): void {
    if (state.reported.has(key)) return
    state.reported.add(key)
    if (kind !== undefined && !this.repeats.admit(kind.name, kind.label)) return
    this.detection(state, cause, message, details)
  }

  /** Tells how many messages of each kind were held back, once. */
  tellHeldBack(): void {
    for (const line of this.repeats.heldBack()) this.notice('warning', line)
  }

  /** What the memory watches found, each finding once per attempt. */
  findings(state: Attempt, findings: MemoryFinding[]): void {
    for (const finding of findings)
      this.detectOnce(state, finding.key, finding.cause, finding.message, finding.details)
  }

  action(
    action: MonitorRecordOf<'action'>['action'],
    cause: MonitorCause,
    reason: string,
    details: Record<string, unknown>,
  ): void {
    this.record({
      type: 'action',
      time: this.clock.iso(),
      attempt: this.actionAttempt(),
      action,
      cause,
      reason,
      details,
    })
    // Pauses and resumes print their own short line; a stop is told by the summary (or the signal notice).
    if (action === 'relaunch' || action === 'kill' || action === 'skipped')
      this.view.notify('warning', reason)
  }

  notice(level: 'info' | 'warning' | 'error', message: string): void {
    this.record({ type: 'notice', time: this.clock.iso(), level, message })
    this.view.notify(level, message)
  }

  noticeOnce(state: Attempt, key: string, message: string): void {
    if (state.reported.has(key)) return
    state.reported.add(key)
    this.notice('warning', message)
  }
}
