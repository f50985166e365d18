import { EventEmitter } from 'node:events'
import type { MonitorGpuReading } from '@rigfit/core'
import { type NvidiaGpuRow, nvidiaQueryArgs, parseNvidiaSmiCsv, ToolStream } from '@rigfit/profiler'
import { systemTimers, type TimerHandle, type Timers } from '../runtime/clock.js'

/** The fields the monitor streams; every one is long-standing, so old drivers answer the query too. */
export const MONITOR_NVIDIA_FIELDS = [
  'index',
  'name',
  'memory.used',
  'memory.total',
  'utilization.gpu',
  'temperature.gpu',
  'power.draw',
  'power.limit',
] as const

/** Arguments of the one persistent nvidia-smi process: the query, then `-lms` so it loops by itself. */
export function nvidiaSmiStreamArgs(intervalMs: number): string[] {
  return [...nvidiaQueryArgs(MONITOR_NVIDIA_FIELDS), '-lms', String(intervalMs)]
}

/** One loop of nvidia-smi: a row per GPU it could read, and the lines that were not rows. */
export interface NvidiaSweep {
  readings: MonitorGpuReading[]
  problems: string[]
}

export interface NvidiaStreamEnd {
  code: number | null
  signal: NodeJS.Signals | null
  /** The tool could not be started (not installed): the sampler falls back to other sources. */
  notFound: boolean
  sweeps: number
  /** The tool's last words on stderr, for the notice. */
  message: string
}

const MIB = 1024 * 1024
/** A row is a few hundred characters; a longer line is not one, and is cut rather than held. */
const MAX_LINE_CHARS = 4096
/** Lines that were not rows kept per sweep: a tool printing garbage must not fill the monitor. */
const MAX_PROBLEMS_PER_SWEEP = 5
/** How long the tool has to end after SIGTERM before SIGKILL. */
export const TOOL_STOP_GRACE_MS = 1000

export function nvidiaRowToReading(row: NvidiaGpuRow): MonitorGpuReading {
  const bytes = (mib: number | null) => (mib === null ? null : Math.round(mib * MIB))
  const percent = (value: number | null) => (value === null ? null : Math.min(100, Math.max(0, value)))
  const nonNegative = (value: number | null) => (value === null || value < 0 ? null : value)
  return {
    index: row.index,
    name: row.name,
    vendor: 'nvidia',
    memoryUsedBytes: bytes(row.memoryUsedMiB),
    memoryTotalBytes: bytes(row.memoryTotalMiB),
    utilizationPercent: percent(row.utilizationPercent),
    temperatureC: row.temperatureC,
    powerWatts: nonNegative(row.powerDrawW),
    powerLimitWatts: nonNegative(row.powerLimitW),
  }
}

/**
 * Runs `nvidia-smi --query-gpu=… --format=csv,noheader,nounits -lms N` once and turns its stream into sweeps.
 * nvidia-smi writes one row per GPU each loop; a sweep ends when an index repeats or the stream goes quiet
 * for a moment, so a device that drops out simply leaves its row out of the next sweep.
 */
export class NvidiaSmiStream extends EventEmitter<{ sweep: [NvidiaSweep]; end: [NvidiaStreamEnd] }> {
  private tool: ToolStream | null = null
  private current: NvidiaSweep = { readings: [], problems: [] }
  private flushTimer: TimerHandle | undefined
  private sweeps = 0
  private stopping = false

  private readonly timers: Timers

  constructor(
    private readonly options: {
      command: string
      intervalMs: number
      env?: NodeJS.ProcessEnv
      timers?: Timers
    },
  ) {
    super()
    this.timers = options.timers ?? systemTimers
  }

  start(): void {
    this.tool = new ToolStream(this.options.command, nvidiaSmiStreamArgs(this.options.intervalMs), {
      env: this.options.env ?? process.env,
      maxLineChars: MAX_LINE_CHARS,
      onLine: (line) => this.onData(line),
      onEnd: (end) => {
        this.flush()
        if (this.stopping) return
        this.emit('end', {
          code: end.code,
          signal: end.signal,
          notFound: end.notFound,
          sweeps: this.sweeps,
          message: (end.spawnError ?? end.stderrTail).trim().split('\n').slice(-3).join(' | '),
        })
      },
    })
    this.tool.start()
  }

  /** Ends the tool and whatever it started (see ToolStream.stop); resolves within the grace period. */
  stop(graceMs = TOOL_STOP_GRACE_MS): Promise<void> {
    this.stopping = true
    this.timers.clearTimeout(this.flushTimer)
    return this.tool?.stop(graceMs) ?? Promise.resolve()
  }

  private onData(line: string): void {
    if (this.stopping) return
    this.onLine(line)
    this.timers.clearTimeout(this.flushTimer)
    // A loop's rows arrive in one write; a short quiet gap means the sweep is complete.
    this.flushTimer = this.timers.setTimeout(
      () => this.flush(),
      Math.min(50, Math.max(5, this.options.intervalMs / 4)),
    )
  }

  private onLine(raw: string): void {
    const line = raw.trim()
    if (line === '') return
    const { rows, problems } = parseNvidiaSmiCsv(line, MONITOR_NVIDIA_FIELDS)
    const row = rows[0]
    if (row) {
      if (this.current.readings.some((reading) => reading.index === row.index)) this.flush()
      this.current.readings.push(nvidiaRowToReading(row))
    } else if (problems.length > 0 && this.current.problems.length < MAX_PROBLEMS_PER_SWEEP) {
      this.current.problems.push(line)
    }
  }

  private flush(): void {
    this.timers.clearTimeout(this.flushTimer)
    if (this.current.readings.length === 0 && this.current.problems.length === 0) return
    const sweep = this.current
    this.current = { readings: [], problems: [] }
    this.sweeps += 1
    this.emit('sweep', sweep)
  }
}
