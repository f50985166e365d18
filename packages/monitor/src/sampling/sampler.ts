import { EventEmitter } from 'node:events'
import type { MonitorGpuReading } from '@rigfit/core'
import { type Clock, systemClock, systemTimers, type TimerHandle, type Timers } from '../runtime/clock.js'
import { AmdToolSampler, findAmdTool } from './amd-tool-sampler.js'
import { findAmdGpuDevices, readAmdGpus } from './amdgpu-sysfs.js'
import { type HostReading, HostSampler } from './host-sampler.js'
import { NvidiaSmiStream, type NvidiaStreamEnd, type NvidiaSweep } from './nvidia-smi-stream.js'

export type GpuSource = 'nvidia-smi' | 'amd-smi' | 'rocm-smi' | 'amdgpu-sysfs' | 'none'

export interface Sample extends HostReading {
  time: Date
  gpus: MonitorGpuReading[]
  gpuSource: GpuSource
  /** True when `gpus` is a fresh, complete sweep: only then may a missing device be read as a lost one. */
  gpusFresh: boolean
  /** Lines the GPU tool printed that were not readings ("Unable to determine the device handle …"). */
  problems: string[]
}

export interface SamplerOptions {
  intervalMs: number
  nvidiaSmi: string
  procRoot: string
  sysfsRoot: string
  useProcfs: boolean
  env?: NodeJS.ProcessEnv
  /** The real clock and timers by default. */
  clock?: Clock
  timers?: Timers
}

const NVIDIA_RESTARTS = 5

/**
 * Emits one sample per interval. NVIDIA sweeps drive the cadence while the persistent nvidia-smi answers;
 * otherwise a timer reads amdgpu sysfs (or no GPU) and the host. Host readings ride along with each sample.
 */
export class Sampler extends EventEmitter<{ sample: [Sample]; notice: ['info' | 'warning', string] }> {
  private readonly host: HostSampler
  private nvidia: NvidiaSmiStream | null = null
  private nvidiaRestarts = 0
  private lastSweepAt = 0
  private lastNvidia: MonitorGpuReading[] = []
  private amdDevices: string[] = []
  private amdTool: AmdToolSampler | null = null
  private reportedAmdProblems = false
  private readonly clock: Clock
  private readonly timers: Timers
  private timer: TimerHandle | undefined
  private restartTimer: TimerHandle | undefined
  private stopped = false
  private markReady: () => void = () => {}
  /**
   * Settles once the GPUs are known: the first NVIDIA sweep or amdgpu reading, or nvidia-smi gone (absent or
   * failed). The monitor waits for it (bounded) before the first launch, to know which devices the run uses.
   */
  readonly ready: Promise<void>

  constructor(private readonly options: SamplerOptions) {
    super()
    this.clock = options.clock ?? systemClock
    this.timers = options.timers ?? systemTimers
    this.host = new HostSampler(options)
    this.ready = new Promise((resolve) => {
      this.markReady = resolve
    })
  }

  start(): void {
    this.amdDevices = findAmdGpuDevices(this.options.sysfsRoot)
    this.startNvidia()
    this.timer = this.timers.setInterval(() => this.onTimer(), this.options.intervalMs)
    this.timer.unref()
  }

  /** Stops sampling; resolves once the tools are ended (SIGKILL at most a grace period after SIGTERM). */
  stop(): Promise<void> {
    this.stopped = true
    this.timers.clearInterval(this.timer)
    this.timers.clearTimeout(this.restartTimer)
    const ending = this.nvidia?.stop() ?? Promise.resolve()
    this.nvidia = null
    this.amdTool?.stop()
    return ending
  }

  /**
   * Without NVIDIA readings, amd-smi (or rocm-smi) is polled when it is on PATH: it names the cards and reads
   * them through the driver's own interface. amdgpu sysfs stays the fallback, and adds the busy percentage.
   */
  private startAmdTool(): boolean {
    const found = findAmdTool(this.options.env ?? process.env)
    if (found === null) return false
    this.amdTool = new AmdToolSampler(found, {
      intervalMs: this.options.intervalMs,
      env: this.options.env ?? process.env,
      clock: this.clock,
      timers: this.timers,
      onSweep: (sweep) => {
        this.markReady()
        if (sweep !== null && sweep.problems.length > 0 && !this.reportedAmdProblems) {
          this.reportedAmdProblems = true
          this.emit('notice', 'warning', `${found.tool}: ${sweep.problems.join('; ')}`)
        }
      },
    })
    this.amdTool.start()
    return true
  }

  private startNvidia(): void {
    const stream = new NvidiaSmiStream({
      command: this.options.nvidiaSmi,
      intervalMs: this.options.intervalMs,
      env: this.options.env,
      timers: this.timers,
    })
    stream.on('sweep', (sweep) => this.onSweep(sweep))
    stream.on('end', (end) => this.onNvidiaEnd(end))
    this.nvidia = stream
    stream.start()
  }

  private onSweep(sweep: NvidiaSweep): void {
    if (this.stopped) return
    this.lastSweepAt = this.clock.now()
    this.lastNvidia = sweep.readings
    this.markReady()
    this.emit('sample', {
      time: new Date(this.clock.now()),
      gpus: sweep.readings,
      gpuSource: 'nvidia-smi',
      gpusFresh: true,
      problems: sweep.problems,
      ...this.host.read(),
    })
  }

  private onNvidiaEnd(end: NvidiaStreamEnd): void {
    this.nvidia = null
    if (this.stopped) return
    // No NVIDIA readings at all: an AMD tool on PATH takes over (ready then waits for its first sweep).
    if ((end.notFound || end.sweeps === 0) && this.amdTool === null && this.startAmdTool()) return
    this.markReady()
    if (end.notFound) {
      if (this.amdDevices.length === 0)
        this.emit('notice', 'info', 'nvidia-smi not found: NVIDIA GPUs are not sampled.')
      return
    }
    const why = `nvidia-smi exited (${end.signal ?? `code ${end.code}`})${end.message ? `: ${end.message}` : ''}`
    if (end.sweeps === 0 || this.nvidiaRestarts >= NVIDIA_RESTARTS) {
      this.emit('notice', 'warning', `${why}; GPU readings stop here.`)
      this.lastNvidia = []
      return
    }
    this.nvidiaRestarts += 1
    this.emit('notice', 'warning', `${why}; restarting it (${this.nvidiaRestarts}/${NVIDIA_RESTARTS}).`)
    this.restartTimer = this.timers.setTimeout(() => this.startNvidia(), 1000)
    this.restartTimer.unref()
  }

  /** Fills the gaps: no NVIDIA stream, or a stream that stalled (then the last rows are shown as stale). */
  private onTimer(): void {
    if (this.stopped) return
    const nvidiaLive =
      this.lastSweepAt > 0 && this.clock.now() - this.lastSweepAt < this.options.intervalMs * 2.5
    if (nvidiaLive) return
    const sysfs = this.amdDevices.length > 0 ? readAmdGpus(this.amdDevices) : []
    const tool = this.amdTool?.take()
    if (this.amdTool !== null && tool?.sweep != null && tool.sweep.readings.length > 0) {
      this.emit('sample', {
        time: new Date(this.clock.now()),
        gpus: withSysfsUtilization(tool.sweep.readings, sysfs),
        gpuSource: this.amdTool.name,
        gpusFresh: tool.fresh,
        problems: [],
        ...this.host.read(),
      })
      return
    }
    const useAmd = sysfs.length > 0
    if (useAmd) this.markReady()
    this.emit('sample', {
      time: new Date(this.clock.now()),
      gpus: useAmd ? sysfs : this.lastNvidia,
      gpuSource: useAmd ? 'amdgpu-sysfs' : this.lastNvidia.length > 0 ? 'nvidia-smi' : 'none',
      gpusFresh: useAmd,
      problems: [],
      ...this.host.read(),
    })
  }
}

/** The busy percentage from sysfs, when sysfs sees the same cards in the same order (names and sizes agree). */
function withSysfsUtilization(tool: MonitorGpuReading[], sysfs: MonitorGpuReading[]): MonitorGpuReading[] {
  const sameCards =
    sysfs.length === tool.length &&
    tool.every((reading, at) => reading.memoryTotalBytes === sysfs[at]?.memoryTotalBytes)
  if (!sameCards) return tool
  return tool.map((reading, at) => ({
    ...reading,
    utilizationPercent: sysfs[at]?.utilizationPercent ?? null,
  }))
}
