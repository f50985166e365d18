import type { LaunchSettings, MonitorGpuReading } from '@rigfit/core'
import type { Sample } from '../sampling/sampler.js'
import { formatGiB } from '../view/format.js'
import { memorySeries } from '../watch/memory-watch.js'
import { type Attempt, stopAttempt } from './attempt.js'
import type { LimitPause } from './limit-pause.js'
import type { RunContext } from './run-context.js'

const MEMORY_ABOVE_PLAN_FRACTION = 1.1
/** Fresh sweeps in a row without a GPU before it counts as lost (one missing row can be a glitch). */
const LOST_AFTER_SWEEPS = 2

/**
 * The machine's side: which GPUs the run uses, and what each sample says about them: a GPU gone from the
 * sweeps (stop and fail over), memory above the plan, the limits that pause, the memory trend over time.
 */
export class DeviceWatch {
  private readonly missingSweeps = new Map<number, number>()

  constructor(
    private readonly run: RunContext,
    private readonly limits: LimitPause,
  ) {}

  /**
   * The GPUs the run uses: CUDA_VISIBLE_DEVICES when it lists indexes; none when the plan trains on the CPU;
   * the first `plan.settings.gpus` when the plan asks for fewer than there are; otherwise all that answered.
   */
  establishDevices(): void {
    const state = this.run.state
    const sample = state.latestSample
    if (sample === null || sample.gpus.length === 0) {
      state.inUse = state.visibleDevices
      return
    }
    state.vendor = sample.gpus[0]?.vendor ?? null
    const plan = this.run.options.plan
    const all = sample.gpus.map((gpu) => gpu.index)
    if (state.visibleDevices !== null) state.inUse = state.visibleDevices
    else if (plan?.settings.device === 'cpu') state.inUse = []
    else if (plan !== null && plan.settings.gpus > 0 && plan.settings.gpus < all.length) {
      state.inUse = all.slice(0, plan.settings.gpus)
    } else state.inUse = all
  }

  detectedDevice(): { device: LaunchSettings['device']; gpus: number } {
    const count = this.run.state.inUse?.length ?? 0
    if (count === 0) return { device: 'cpu', gpus: 0 }
    return { device: this.run.state.vendor === 'amd' ? 'rocm' : 'cuda', gpus: count }
  }

  /** A new attempt starts with no GPU counted missing. */
  startAttempt(): void {
    this.missingSweeps.clear()
  }

  onSample(sample: Sample): void {
    const { state, progress, clock, recorder } = this.run
    state.latestSample = sample
    // GPUs that answered only after the first launch (a slow nvidia-smi start) are adopted when they appear.
    if (state.inUse === null && sample.gpusFresh && sample.gpus.length > 0) this.establishDevices()
    const current = state.current
    recorder.record({
      type: 'sample',
      time: sample.time.toISOString(),
      attempt: current?.number ?? null,
      gpus: sample.gpus.map((gpu) => ({
        ...gpu,
        predictedBytes: state.inUse === null || state.inUse.includes(gpu.index) ? state.predictedBytes : null,
      })),
      cpu: sample.cpu,
      memory: sample.memory,
      battery: sample.battery,
      paused: this.run.pause.paused,
    })
    const fresh = sample.gpusFresh ? this.inUseReadings(sample) : []
    this.limits.update(current, fresh, sample.battery)
    if (current !== null && !current.stopping) {
      this.checkDevices(current, sample)
      this.checkAbovePlan(current, sample)
      if (!progress.hasStep) {
        const series = memorySeries(sample, state.inUse, () => current.group.residentBytes())
        recorder.findings(current, state.timeMemory.observe(clock.activeSeconds(), 1, series, clock.nowMs()))
      }
    }
    this.run.refreshView()
  }

  private inUseReadings(sample: Sample): MonitorGpuReading[] {
    const inUse = this.run.state.inUse
    return sample.gpus.filter((gpu) => inUse === null || inUse.includes(gpu.index))
  }

  /** A device the run uses, missing from two fresh sweeps in a row, is gone: stop the attempt and fail over. */
  private checkDevices(current: Attempt, sample: Sample): void {
    const { recorder, options } = this.run
    const inUse = this.run.state.inUse
    for (const problem of sample.problems) {
      recorder.detectOnce(
        current,
        `tool:${problem}`,
        'device-error',
        `nvidia-smi: ${problem}`,
        { line: problem },
        { name: 'tool-problem', label: 'nvidia-smi lines that were not readings' },
      )
    }
    if (!sample.gpusFresh || inUse === null || inUse.length === 0) return
    const present = new Set(sample.gpus.map((gpu) => gpu.index))
    for (const index of inUse) {
      this.missingSweeps.set(index, present.has(index) ? 0 : (this.missingSweeps.get(index) ?? 0) + 1)
    }
    const lost = inUse.filter((index) => (this.missingSweeps.get(index) ?? 0) >= LOST_AFTER_SWEEPS)
    if (lost.length === 0 || current.reported.has('device-lost')) return
    current.reported.add('device-lost')
    const reason = `GPU ${lost.join(',')} disappeared from the samples`
    recorder.detection(current, 'device-lost', reason, { lost, inUse }, false)
    if (!options.actions.gpuFailover) {
      recorder.action(
        'skipped',
        'device-lost',
        `${reason}; GPU failover is switched off (--no-gpu-failover)`,
        {},
      )
      return
    }
    current.evidence.deviceLost = true
    current.lostDevices = lost
    recorder.action('kill', 'device-lost', `${reason}: stopping the trainer to relaunch without it`, { lost })
    stopAttempt(current, 'SIGTERM', options.graceSeconds * 1000)
  }

  private checkAbovePlan(current: Attempt, sample: Sample): void {
    const predicted = this.run.state.predictedBytes
    if (predicted === null || !sample.gpusFresh) return
    for (const gpu of this.inUseReadings(sample)) {
      const used = gpu.memoryUsedBytes
      if (used === null || used <= predicted * MEMORY_ABOVE_PLAN_FRACTION) continue
      const over = Math.round((used / predicted - 1) * 100)
      const message = `GPU${gpu.index} uses ${formatGiB(used)} GiB, ${over}% more than the plan's ${formatGiB(predicted)} GiB`
      this.run.recorder.noticeOnce(current, `above-plan:${gpu.index}`, message)
    }
  }
}
