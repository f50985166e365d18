import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { MonitorGpuReading } from '@rigfit/core'
import { parseAmdSmi, parseRocmSmiJson, ROCM_SMI_READING_ARGS, runTool } from '@rigfit/profiler'
import type { Clock, TimerHandle, Timers } from '../runtime/clock.js'

export type AmdTool = 'amd-smi' | 'rocm-smi'

type AmdParseResult = ReturnType<typeof parseAmdSmi>
type AmdGpuRow = AmdParseResult['rows'][number]

/** One call may take this long (amd-smi starts a Python interpreter); then it is killed and the tick skipped. */
const CALL_TIMEOUT_MS = 10_000
/** Output beyond this is not a GPU listing. */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024

const ROCM_SMI_ARGS = [...ROCM_SMI_READING_ARGS, '--json']

/** The first of amd-smi and rocm-smi found executable on PATH, with its path; null when neither is. */
export function findAmdTool(env: NodeJS.ProcessEnv): { tool: AmdTool; path: string } | null {
  const dirs = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '')
  for (const tool of ['amd-smi', 'rocm-smi'] as const) {
    for (const dir of dirs) {
      const path = join(dir, tool)
      try {
        accessSync(path, constants.X_OK)
        return { tool, path }
      } catch {
        // not here
      }
    }
  }
  return null
}

/** One call under the probes' discipline (own group, marker, byte bound, deadline); null when it failed. */
async function run(
  path: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<string | null> {
  const result = await runTool(path, args, {
    env,
    timeoutMs: CALL_TIMEOUT_MS,
    maxOutputBytes: MAX_OUTPUT_BYTES,
    signal,
  })
  return result.ok ? result.stdout : null
}

function toReading(row: AmdGpuRow): MonitorGpuReading {
  return {
    index: row.index,
    name: row.name ?? `AMD GPU ${row.index}`,
    vendor: 'amd',
    memoryUsedBytes: row.vramUsedBytes,
    memoryTotalBytes: row.vramTotalBytes,
    // Neither listing carries the busy percentage; amdgpu sysfs adds it when the cards line up.
    utilizationPercent: null,
    temperatureC: row.temperatureC,
    powerWatts: row.powerDrawW,
    powerLimitWatts: row.powerLimitW,
  }
}

export interface AmdToolSweep {
  readings: MonitorGpuReading[]
  /** What the parser rejected (a field out of range, a wrong type): reported, never read as a device error. */
  problems: string[]
}

/**
 * Polls amd-smi (`static --json` once for names and limits, `metric --json` each time) or rocm-smi (`--json`
 * with the figures the monitor shows), parsed by the profiler's parsers. Neither tool has a streaming mode
 * that prints JSON, so each sweep is one call, started no sooner than one interval after the last one began
 * and never while one still runs. The latest sweep is kept for the sampler to take.
 */
export class AmdToolSampler {
  private staticText: string | null = null
  private latest: AmdToolSweep | null = null
  private fresh = false
  private timer: TimerHandle | undefined
  private stopped = false
  private readonly abort = new AbortController()

  constructor(
    private readonly tool: { tool: AmdTool; path: string },
    private readonly options: {
      intervalMs: number
      env: NodeJS.ProcessEnv
      clock: Clock
      timers: Timers
      /** After each call, with its sweep (null: the call failed). */
      onSweep?: (sweep: AmdToolSweep | null) => void
    },
  ) {}

  get name(): AmdTool {
    return this.tool.tool
  }

  start(): void {
    void this.loop()
  }

  stop(): void {
    this.stopped = true
    this.options.timers.clearTimeout(this.timer)
    // A call in flight is ended with everything it started: the monitor's exit never waits on it.
    this.abort.abort()
  }

  /** The latest sweep and whether it is new since the last take. */
  take(): { sweep: AmdToolSweep | null; fresh: boolean } {
    const fresh = this.fresh
    this.fresh = false
    return { sweep: this.latest, fresh }
  }

  /** One sweep: the tool's output parsed into readings; null when the call failed. */
  async sweep(): Promise<AmdToolSweep | null> {
    const { path, tool } = this.tool
    const env = this.options.env
    let parsed: AmdParseResult
    if (tool === 'amd-smi') {
      this.staticText ??= await run(path, ['static', '--json'], env, this.abort.signal)
      const metric = await run(path, ['metric', '--json'], env, this.abort.signal)
      if (metric === null) return null
      parsed = this.staticText === null ? parseAmdSmi('[]', metric) : parseAmdSmi(this.staticText, metric)
    } else {
      const text = await run(path, ROCM_SMI_ARGS, env, this.abort.signal)
      if (text === null) return null
      parsed = parseRocmSmiJson(text)
    }
    return { readings: parsed.rows.map(toReading), problems: parsed.problems }
  }

  private async loop(): Promise<void> {
    if (this.stopped) return
    const startedAt = this.options.clock.now()
    const sweep = await this.sweep()
    if (this.stopped) return
    if (sweep !== null) {
      this.latest = sweep
      this.fresh = true
    }
    this.options.onSweep?.(sweep)
    const wait = Math.max(0, this.options.intervalMs - (this.options.clock.now() - startedAt))
    this.timer = this.options.timers.setTimeout(() => void this.loop(), wait)
    this.timer.unref()
  }
}
