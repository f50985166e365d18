import { z } from 'zod'
import { Bytes, Precision } from './common.js'
import { Settings } from './training-plan.js'

/**
 * `rigfit monitor` records: one JSON object per line in the run's `monitor.jsonl` (and on stdout with
 * `--json`). Every record has a `type` and an ISO `time`; field names are public.
 */

const Time = z.string()
const Attempt = z.number().int().positive()
const Percent = z.number().min(0).max(100)

/** One device reading from nvidia-smi or amdgpu sysfs; a field the tool could not report is null. */
export const MonitorGpuReading = z.object({
  index: z.number().int().nonnegative(),
  name: z.string(),
  vendor: z.enum(['nvidia', 'amd']),
  memoryUsedBytes: Bytes.nullable(),
  memoryTotalBytes: Bytes.nullable(),
  utilizationPercent: Percent.nullable(),
  temperatureC: z.number().nullable(),
  powerWatts: z.number().nonnegative().nullable(),
  powerLimitWatts: z.number().nonnegative().nullable(),
})
export type MonitorGpuReading = z.infer<typeof MonitorGpuReading>

export const MonitorBatteryReading = z.object({
  onBattery: z.boolean(),
  percent: Percent.nullable(),
})
export type MonitorBatteryReading = z.infer<typeof MonitorBatteryReading>

/** The batch and numeric settings handed to the trainer on a launch (env vars and plan copy). */
export const LaunchSettings = Settings.pick({
  device: true,
  gpus: true,
  nodes: true,
  microBatch: true,
  gradAccum: true,
  effectiveBatch: true,
  gradCheckpointing: true,
}).extend({
  /** Null when neither a plan nor a flag told the monitor the precision (then RIGFIT_PRECISION is not set). */
  precision: Precision.nullable(),
})
export type LaunchSettings = z.infer<typeof LaunchSettings>

/** What went wrong or what the monitor noticed. */
export const MonitorCause = z.enum([
  'gpu-oom',
  'host-oom-kill',
  'device-lost',
  'device-error',
  'hang',
  'crash',
  'crash-loop',
  'retry-limit',
  'recovery-exhausted',
  'memory-leak',
  'oom-imminent',
  'temperature',
  'power',
  'battery',
  'on-battery',
  'interrupt',
  'sampler',
  /** The trainer's measured speed is more than 30 % off the plan's. */
  'speed-off-plan',
])
export type MonitorCause = z.infer<typeof MonitorCause>

export const MonitorAction = z.enum(['pause', 'resume', 'wait', 'kill', 'relaunch', 'stop', 'skipped'])
export type MonitorAction = z.infer<typeof MonitorAction>

/** How an attempt ended. */
export const ExitCause = z.enum([
  'success',
  'gpu-oom',
  'host-oom-kill',
  'device-lost',
  'device-error',
  'hang',
  'interrupted',
  'crash',
])
export type ExitCause = z.infer<typeof ExitCause>

export const MetricsSource = z.enum(['json', 'hf', 'tqdm', 'lightning', 'text', 'file'])
export type MetricsSource = z.infer<typeof MetricsSource>

export const MonitorStartRecord = z.object({
  type: z.literal('start'),
  time: Time,
  rigfitVersion: z.string(),
  command: z.array(z.string()).min(1),
  cwd: z.string(),
  logDir: z.string(),
  planPath: z.string().nullable(),
  /**
   * The plan's speed for the run (measured on this machine or predicted, as the plan says), which the run report
   * plots against the measured one; null without a plan, absent in records written before it existed.
   */
  plannedTokensPerSecond: z.number().nonnegative().nullable().optional(),
  intervalMs: z.number().int().positive(),
  /** Every setting of the run (thresholds, switches, limits), as resolved from flags and defaults. */
  options: z.record(z.string(), z.unknown()),
})

export const MonitorLaunchRecord = z.object({
  type: z.literal('launch'),
  time: Time,
  attempt: Attempt,
  pid: z.number().int().positive(),
  planFile: z.string().nullable(),
  settings: LaunchSettings.nullable(),
  /** Physical GPU indexes the trainer may use (CUDA_VISIBLE_DEVICES); null when the monitor did not restrict them. */
  visibleDevices: z.array(z.number().int().nonnegative()).nullable(),
  /** The RIGFIT_* and device-selection variables set for this launch. */
  env: z.record(z.string(), z.string()),
  /**
   * With `--configs`: the folder of exported configs this launch reads — the user's own, or the copies made again
   * for this launch's settings. Absent without `--configs`.
   */
  configDir: z.string().optional(),
  /** The command as launched, when the monitor rewrote config paths in it (absent when it ran as given). */
  command: z.array(z.string()).optional(),
})

export const MonitorSampleRecord = z.object({
  type: z.literal('sample'),
  time: Time,
  attempt: Attempt.nullable(),
  gpus: z.array(MonitorGpuReading.extend({ predictedBytes: Bytes.nullable() })),
  cpu: z.object({ utilizationPercent: Percent }).nullable(),
  memory: z.object({ usedBytes: Bytes, totalBytes: Bytes }).nullable(),
  battery: MonitorBatteryReading.nullable(),
  paused: z.boolean(),
})

export const MonitorMetricsRecord = z.object({
  type: z.literal('metrics'),
  time: Time,
  attempt: Attempt,
  source: MetricsSource,
  step: z.number().int().nonnegative().nullable(),
  totalSteps: z.number().int().positive().nullable(),
  loss: z.number().nullable(),
  learningRate: z.number().nullable(),
  epoch: z.number().nullable(),
  tokens: z.number().nonnegative().nullable(),
  tokensPerSecond: z.number().nonnegative().nullable(),
  samplesPerSecond: z.number().nonnegative().nullable(),
  /** Seconds per optimizer step, measured while the trainer was running (pauses excluded). */
  stepSeconds: z.number().nonnegative().nullable(),
  etaSeconds: z.number().nonnegative().nullable(),
})

export const MonitorOutputRecord = z.object({
  type: z.literal('output'),
  time: Time,
  attempt: Attempt,
  stream: z.enum(['stdout', 'stderr']),
  line: z.string(),
})

export const MonitorDetectionRecord = z.object({
  type: z.literal('detection'),
  time: Time,
  attempt: Attempt.nullable(),
  cause: MonitorCause,
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
})

export const MonitorActionRecord = z.object({
  type: z.literal('action'),
  time: Time,
  attempt: Attempt.nullable(),
  action: MonitorAction,
  cause: MonitorCause,
  reason: z.string(),
  details: z.record(z.string(), z.unknown()),
})

export const MonitorExitRecord = z.object({
  type: z.literal('exit'),
  time: Time,
  attempt: Attempt,
  code: z.number().int().nullable(),
  signal: z.string().nullable(),
  cause: ExitCause,
  durationSeconds: z.number().nonnegative(),
  lastStep: z.number().int().nonnegative().nullable(),
})

export const MonitorAdviceRecord = z.object({
  type: z.literal('advice'),
  time: Time,
  topic: z.literal('checkpoint-cadence'),
  message: z.string(),
  intervalMinutes: z.number().positive(),
  intervalSteps: z.number().int().positive().nullable(),
  basis: z.record(z.string(), z.unknown()),
})

export const MonitorNoticeRecord = z.object({
  type: z.literal('notice'),
  time: Time,
  level: z.enum(['info', 'warning', 'error']),
  message: z.string(),
})

export const MonitorSummaryRecord = z.object({
  type: z.literal('summary'),
  time: Time,
  outcome: z.enum(['completed', 'failed', 'interrupted', 'stopped']),
  exitCode: z.number().int().nonnegative(),
  reason: z.string(),
  attempts: z.number().int().nonnegative(),
  lastStep: z.number().int().nonnegative().nullable(),
  elapsedSeconds: z.number().nonnegative(),
  pausedSeconds: z.number().nonnegative(),
  settings: LaunchSettings.nullable(),
})

export const MonitorRecord = z.discriminatedUnion('type', [
  MonitorStartRecord,
  MonitorLaunchRecord,
  MonitorSampleRecord,
  MonitorMetricsRecord,
  MonitorOutputRecord,
  MonitorDetectionRecord,
  MonitorActionRecord,
  MonitorExitRecord,
  MonitorAdviceRecord,
  MonitorNoticeRecord,
  MonitorSummaryRecord,
])
export type MonitorRecord = z.infer<typeof MonitorRecord>
export type MonitorRecordOf<T extends MonitorRecord['type']> = Extract<MonitorRecord, { type: T }>

const OptionalNumber = z.number().nullable().optional()

/**
 * A metrics object a trainer may print (JSON line on stdout/stderr, a Python dict in Hugging Face Trainer
 * style, or a line of a metrics file). Keys are aliases of one another where noted; unknown keys are ignored.
 */
export const TrainerMetricsLine = z
  .object({
    step: OptionalNumber,
    global_step: OptionalNumber,
    loss: OptionalNumber,
    train_loss: OptionalNumber,
    /** Tokens processed since the start of training (cumulative). */
    tokens: OptionalNumber,
    num_input_tokens_seen: OptionalNumber,
    tokens_per_second: OptionalNumber,
    samples_per_second: OptionalNumber,
    learning_rate: OptionalNumber,
    lr: OptionalNumber,
    epoch: OptionalNumber,
    total_steps: OptionalNumber,
    max_steps: OptionalNumber,
    /** Seconds the trainer's latest checkpoint save took (sharpens the checkpoint cadence advice). */
    checkpoint_seconds: OptionalNumber,
  })
  .loose()
export type TrainerMetricsLine = z.infer<typeof TrainerMetricsLine>
