import { RigfitError, type TrainingPlan } from '@rigfit/core'
import type { ExportedConfigs } from './act/launch-configs.js'
import type { SettingsOverrides } from './act/launch-settings.js'
import type { MonitorRuntime } from './runtime/monitor-runtime.js'
import type { ViewMode } from './view/monitor-view.js'

/** Each action the monitor may take on its own; all on by default, each can be switched off. */
export interface MonitorActions {
  /** Relaunch after an out-of-memory failure with smaller micro-batch (then checkpointing, then precision). */
  oomRecovery: boolean
  /** Pause above --max-temp (and above --max-power when set), resume once cooled. */
  thermal: boolean
  /** Pause below --min-battery while on battery, resume on AC. */
  battery: boolean
  /** Relaunch on the remaining GPUs (or the CPU) when a device disappears or fails. */
  gpuFailover: boolean
  /** Kill and relaunch a trainer that made no progress for --hang-minutes. */
  hangRestart: boolean
  /** Relaunch after any other failure (the trainer resumes from its checkpoint). */
  crashRestart: boolean
}

export interface MonitorOptions {
  command: string[]
  cwd: string
  env: NodeJS.ProcessEnv
  plan: TrainingPlan | null
  planPath: string | null
  /** Exported configs the command reads (`--configs`): made again for each launch whose settings differ. */
  configs: ExportedConfigs | null
  overrides: SettingsOverrides
  logDir: string
  /** The node of a multi-node job this monitor records for: its log is `monitor-<node>.jsonl`; null: one machine. */
  node?: string | null
  /** Replace an existing monitor.jsonl in logDir. */
  force: boolean
  /** Size in MiB at which monitor.jsonl is rotated to monitor.1.jsonl (one rotated file kept); 0: no cap. */
  maxLogMb: number
  intervalMs: number
  maxRestarts: number
  restartDelaySeconds: number
  graceSeconds: number
  hangMinutes: number
  crashLoopFailures: number
  crashLoopMinutes: number
  maxTempC: number
  tempHysteresisC: number
  /** Total board power of the GPUs in use, in watts; null: no power limit. */
  maxPowerW: number | null
  /** Null: 10% of maxPowerW. */
  powerHysteresisW: number | null
  minBatteryPercent: number
  totalSteps: number | null
  metricsFile: string | null
  actions: MonitorActions
  view: ViewMode
  statusSeconds: number
  /** The nvidia-smi executable (found on PATH by default). */
  nvidiaSmi: string
  /** Roots of /proc and /sys for CPU, RAM, battery and amdgpu readings (tests point them at fixtures). */
  procRoot: string
  sysfsRoot: string
  /** Install SIGINT/SIGTERM/SIGHUP handlers that stop the trainer cleanly (a CLI wants this; a library caller may not). */
  handleSignals: boolean
  /** Clock, timers, trainer process, sampler and process hooks; each defaults to the real one. */
  runtime?: Partial<MonitorRuntime>
}

export const DEFAULT_MONITOR_OPTIONS = {
  intervalMs: 1000,
  maxRestarts: 3,
  restartDelaySeconds: 3,
  graceSeconds: 10,
  hangMinutes: 30,
  crashLoopFailures: 3,
  crashLoopMinutes: 10,
  maxTempC: 85,
  tempHysteresisC: 10,
  maxPowerW: null,
  powerHysteresisW: null,
  minBatteryPercent: 20,
  totalSteps: null,
  metricsFile: null,
  force: false,
  maxLogMb: 100,
  view: 'plain',
  statusSeconds: 10,
  nvidiaSmi: 'nvidia-smi',
  procRoot: '/proc',
  sysfsRoot: '/sys',
  handleSignals: true,
  overrides: {},
  plan: null,
  planPath: null,
  configs: null,
  actions: {
    oomRecovery: true,
    thermal: true,
    battery: true,
    gpuFailover: true,
    hangRestart: true,
    crashRestart: true,
  },
} as const satisfies Partial<MonitorOptions>

function usage(flag: string, message: string, suggestion: string): RigfitError {
  return new RigfitError('usage', 'E_MONITOR_FLAG', `${flag}: ${message}`, { suggestion })
}

/** Checks the relations between settings that single flag types cannot (ranges, hysteresis below the limit). */
export function validateMonitorOptions(options: MonitorOptions): void {
  if (options.command.length === 0 || options.command[0] === '') {
    throw usage(
      'command',
      'no training command given',
      'Put the command after --: rigfit monitor -- python train.py',
    )
  }
  const positive = (flag: string, value: number) => {
    if (!(Number.isFinite(value) && value > 0))
      throw usage(flag, `must be a positive number, got ${value}`, `Pass --${flag} with a value above 0.`)
  }
  if (!Number.isInteger(options.intervalMs) || options.intervalMs < 50) {
    throw usage(
      '--interval-ms',
      `must be a whole number of at least 50, got ${options.intervalMs}`,
      'Sampling faster than 20 Hz costs more than it tells; use 1000 for 1 Hz.',
    )
  }
  if (!Number.isInteger(options.maxRestarts) || options.maxRestarts < 0) {
    throw usage(
      '--max-restarts',
      `must be a whole number of 0 or more, got ${options.maxRestarts}`,
      'Pass --max-restarts 0 to never relaunch.',
    )
  }
  positive('hang-minutes', options.hangMinutes)
  positive('crash-loop-minutes', options.crashLoopMinutes)
  positive('status-seconds', options.statusSeconds)
  if (!(options.graceSeconds >= 0))
    throw usage('--grace-seconds', 'must be 0 or more', 'Pass the seconds a trainer gets to save and exit.')
  if (!(options.restartDelaySeconds >= 0))
    throw usage('--restart-delay', 'must be 0 or more', 'Pass the seconds to wait before a relaunch.')
  if (!Number.isInteger(options.crashLoopFailures) || options.crashLoopFailures < 2) {
    throw usage(
      '--crash-loop-failures',
      `must be a whole number of at least 2, got ${options.crashLoopFailures}`,
      'A crash loop needs at least two failures.',
    )
  }
  if (!(options.tempHysteresisC > 0 && options.tempHysteresisC < options.maxTempC)) {
    throw usage(
      '--temp-hysteresis',
      `must be above 0 and below --max-temp (${options.maxTempC}), got ${options.tempHysteresisC}`,
      'A hysteresis of 5–15 °C avoids pausing and resuming every second.',
    )
  }
  if (options.maxPowerW !== null) {
    positive('max-power', options.maxPowerW)
    const hysteresis = options.powerHysteresisW ?? options.maxPowerW * 0.1
    if (!(hysteresis > 0 && hysteresis < options.maxPowerW)) {
      throw usage(
        '--power-hysteresis',
        `must be above 0 and below --max-power (${options.maxPowerW}), got ${hysteresis}`,
        'Leave it out for 10% of --max-power.',
      )
    }
  }
  if (!(Number.isFinite(options.maxLogMb) && options.maxLogMb >= 0)) {
    throw usage(
      '--max-log-mb',
      `must be 0 or more, got ${options.maxLogMb}`,
      'Pass --max-log-mb 100 to rotate the log at 100 MiB, or 0 for no cap.',
    )
  }
  if (!(options.minBatteryPercent >= 0 && options.minBatteryPercent <= 100)) {
    throw usage(
      '--min-battery',
      `must be a percentage from 0 to 100, got ${options.minBatteryPercent}`,
      'Pass --min-battery 20 to pause at 20% charge.',
    )
  }
}
