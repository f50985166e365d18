import { matchDeviceError, matchGpuOom } from '../detect/failure-patterns.js'
import { MetricsFileTail } from '../metrics/metrics-file-tail.js'
import { type ParsedMetrics, parseTrainingLine, type TrainerMetrics } from '../metrics/parse-training-line.js'
import type { SegmentKind } from '../process/output-lines.js'
import { memorySeries } from '../watch/memory-watch.js'
import { SpeedWatch } from '../watch/speed-watch.js'
import type { Attempt } from './attempt.js'
import type { RunContext } from './run-context.js'

export type Stream = 'stdout' | 'stderr'

/**
 * The trainer's side of the story: its output lines (recorded, scanned for OOM and device failures) and the
 * training metrics in them or in --metrics-file, which move progress, the hang clock and the step memory trend.
 */
export class TrainerOutput {
  private readonly metricsTail: MetricsFileTail | null
  /** The measured speed against the plan's, told once per run. */
  private readonly speed: SpeedWatch

  constructor(private readonly run: RunContext) {
    const file = run.options.metricsFile
    this.metricsTail = file !== null ? new MetricsFileTail(file) : null
    this.speed = new SpeedWatch(run.options.plan?.throughput.tokensPerSecond ?? null)
  }

  onOutput(state: Attempt, stream: Stream, text: string, kind: SegmentKind): void {
    const { recorder } = this.run
    const parsed = parseTrainingLine(text)
    if (parsed !== null) this.onMetrics(state, parsed)
    if (kind !== 'line') return
    this.run.view.line(stream, text)
    recorder.record({ type: 'output', time: this.run.clock.iso(), attempt: state.number, stream, line: text })
    if (!state.sawMetrics) state.lastProgressAt = this.run.clock.activeSeconds()
    const oom = matchGpuOom(text)
    if (oom !== null) {
      state.evidence.gpuOom = true
      recorder.detectOnce(state, 'gpu-oom', 'gpu-oom', `the trainer ran out of GPU memory ("${oom}")`, {
        line: text.trim().slice(0, 500),
      })
    }
    const device = matchDeviceError(text)
    if (device !== null) {
      state.evidence.deviceError = true
      state.deviceErrorIndex ??= device.deviceIndex
      const message = `the trainer reports a device failure: ${device.message}`
      recorder.detectOnce(state, 'device-error', 'device-error', message, { deviceIndex: device.deviceIndex })
    }
  }

  /** New lines of --metrics-file, read into the running attempt. */
  pollMetricsFile(): void {
    const state = this.run.state.current
    if (this.metricsTail === null || state === null) return
    for (const line of this.metricsTail.poll()) {
      const parsed = parseTrainingLine(line)
      if (parsed !== null && parsed.source !== 'tqdm')
        this.onMetrics(state, { source: 'file', metrics: parsed.metrics })
    }
  }

  private onMetrics(
    state: Attempt,
    parsed: ParsedMetrics | { source: 'file'; metrics: TrainerMetrics },
  ): void {
    const { progress, clock } = this.run
    const active = clock.activeSeconds()
    const update = progress.update(parsed.metrics, parsed.source === 'tqdm', active)
    if (update === null) return
    state.sawMetrics = true
    if (parsed.metrics.step !== undefined) state.lastStep = parsed.metrics.step
    // Progress bars redraw many times a step, and trainers repeat figures in event lines: only news counts.
    if (!update.changed) return
    state.lastProgressAt = active
    const { checkpointSeconds: _, ...s } = progress.snapshot()
    this.run.recorder.record({
      type: 'metrics',
      time: clock.iso(),
      attempt: state.number,
      source: parsed.source,
      ...s,
    })
    if (update.stepAdvanced) {
      const off = this.speed.observe(s.tokensPerSecond, s.etaSeconds)
      if (off !== null) this.run.recorder.detection(state, 'speed-off-plan', off.message, off.details)
    }
    const { latestSample, inUse, stepMemory } = this.run.state
    if (update.stepAdvanced && s.step !== null && latestSample !== null) {
      const series = memorySeries(latestSample, inUse, () => state.group.residentBytes())
      this.run.recorder.findings(state, stepMemory.observe(s.step, s.stepSeconds, series, clock.nowMs()))
    }
  }
}
