import { statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Errors, Flags, type Interfaces } from '@oclif/core'
import { Precision, RigfitError, type TrainingPlan } from '@rigfit/core'
import { readPlanFile, requireExportManifest } from '@rigfit/exporters'
import {
  DEFAULT_MONITOR_OPTIONS,
  MONITOR_STOPPED_EXIT_CODE,
  type MonitorOptions,
  multiNodeName,
  runMonitor,
  type ViewMode,
} from '@rigfit/monitor'
import { RigfitCommand } from '../lib/base-command.js'
import { learnFromRun } from '../lib/calibration/learn-from-run.js'
import { inputTimeoutFlags, inputTimeoutMs } from '../lib/input-timeout.js'
import { writeRunReport } from '../lib/report-monitor.js'
import { checkReportTarget, reportFlag } from '../lib/report-write.js'

/** A flag that takes any finite number (oclif's integer flag refuses 0.02 minutes). */
const numberFlag = Flags.custom<number>({
  parse: async (input) => {
    const value = Number(input)
    if (input.trim() === '' || !Number.isFinite(value))
      throw new Errors.CLIError(`Expected a number but received: ${input}`)
    return value
  },
})

const D = DEFAULT_MONITOR_OPTIONS

export default class Monitor extends RigfitCommand {
  static override summary =
    'Run a training command and supervise it: live telemetry, OOM recovery, thermal pause, battery policy.'

  static override description =
    `Runs the command after -- in a process group of its own and watches it: GPU memory against the plan's prediction, utilisation, temperature and power (one persistent nvidia-smi, or amdgpu sysfs), CPU, RAM and battery, and the training metrics the trainer prints (JSON lines, Hugging Face Trainer log dicts, tqdm bars, or --metrics-file).

It detects memory leaks (with the projected time of OOM), GPU and host out-of-memory failures, hangs, lost GPUs and crash loops, and acts: relaunches after an OOM with half the micro-batch and twice the accumulation (same effective batch; then gradient checkpointing, then mixed precision), pauses the trainer (SIGSTOP) above --max-temp or --max-power and below --min-battery on battery, and relaunches on the remaining GPUs or the CPU when one fails. Every action can be switched off and is recorded with its reason in <log-dir>/monitor.jsonl; in a Slurm job over several nodes each node records into the same <log-dir>, in monitor-<node>.jsonl.

Each launch gets RIGFIT_ATTEMPT, RIGFIT_PLAN_FILE (a rewritten copy of the plan in the log directory), RIGFIT_MICRO_BATCH, RIGFIT_GRAD_ACCUM, RIGFIT_GRAD_CKPT (0/1), RIGFIT_PRECISION and RIGFIT_DEVICE; the trainer resumes from its own latest checkpoint. Ctrl-C sends SIGINT to the trainer's group, then SIGTERM after --grace-seconds, then SIGKILL; nothing it started is left running.

--json prints JSON lines (one record per line) on stdout while the trainer's output goes to stderr. The exit code is the trainer's, or ${MONITOR_STOPPED_EXIT_CODE} when the monitor stopped the run (retry limit, crash loop, OOM recovery exhausted).`

  static override examples = [
    '<%= config.bin %> monitor --plan plan.json -- python train.py',
    '<%= config.bin %> monitor --plan plan.json --max-temp 80 --max-restarts 5 -- torchrun --nproc-per-node 2 train.py',
    '<%= config.bin %> monitor --micro-batch 8 --grad-accum 4 --json -- python train.py > run.jsonl',
    '<%= config.bin %> monitor --quiet --no-oom-recovery --log-dir runs/exp1 -- ./train.sh',
  ]

  // `--json` here means JSON lines for the whole run, not oclif's single object at the end.
  static override enableJsonFlag = false
  static override strict = false

  static override flags = {
    ...inputTimeoutFlags,
    plan: Flags.string({
      description:
        'TrainingPlan JSON the run follows; its memory prediction is shown and its settings are adjusted on recovery.',
      helpValue: 'FILE',
    }),
    configs: Flags.string({
      description:
        'Folder written by `rigfit export --out` that the command reads: on a relaunch with other settings (OOM ladder, failover) its exports are made again for them and the command is pointed at the new copies.',
      helpValue: 'DIR',
    }),
    'log-dir': Flags.string({
      description: 'Where monitor.jsonl and the plan copies go (default: ./rigfit-runs/<timestamp>/).',
      helpValue: 'DIR',
    }),
    force: Flags.boolean({
      description: 'Replace a monitor.jsonl already in --log-dir (a regular file only; links are refused).',
      default: false,
    }),
    'max-log-mb': numberFlag({
      description: 'Rotate monitor.jsonl to monitor.1.jsonl at this size in MiB (one kept); 0: no cap.',
      default: D.maxLogMb,
      helpValue: 'MIB',
    }),
    'interval-ms': Flags.integer({
      description: 'Sampling interval in milliseconds.',
      default: D.intervalMs,
      min: 50,
    }),
    'max-restarts': Flags.integer({
      description: 'Relaunches allowed after failures.',
      default: D.maxRestarts,
      min: 0,
    }),
    'restart-delay': numberFlag({
      description: 'Seconds to wait before a relaunch.',
      default: D.restartDelaySeconds,
      helpValue: 'SECONDS',
    }),
    'grace-seconds': numberFlag({
      description: 'Seconds the trainer gets after SIGINT (then SIGTERM) before the next signal.',
      default: D.graceSeconds,
      helpValue: 'SECONDS',
    }),
    'hang-minutes': numberFlag({
      description: 'Minutes without progress that count as a hang (fractions allowed).',
      default: D.hangMinutes,
      helpValue: 'MINUTES',
    }),
    'crash-loop-failures': Flags.integer({
      description: 'Failures with unchanged settings that make a crash loop.',
      default: D.crashLoopFailures,
      min: 2,
    }),
    'crash-loop-minutes': numberFlag({
      description: 'Window in which --crash-loop-failures count.',
      default: D.crashLoopMinutes,
      helpValue: 'MINUTES',
    }),
    'max-temp': numberFlag({
      description: 'Pause the trainer while a GPU it uses is hotter than this (°C).',
      default: D.maxTempC,
      helpValue: 'CELSIUS',
    }),
    'temp-hysteresis': numberFlag({
      description: 'Resume once the GPUs are this many °C below --max-temp.',
      default: D.tempHysteresisC,
      helpValue: 'CELSIUS',
    }),
    'max-power': numberFlag({
      description:
        'Pause while the GPUs in use draw more than this many watts together (3 readings in a row).',
      helpValue: 'WATTS',
    }),
    'power-hysteresis': numberFlag({
      description: 'Resume once power is this many watts below --max-power (default: 10% of it).',
      helpValue: 'WATTS',
    }),
    'min-battery': numberFlag({
      description: 'On battery, pause below this charge (percent); resume on AC.',
      default: D.minBatteryPercent,
      helpValue: 'PERCENT',
    }),
    'micro-batch': Flags.integer({
      description:
        "Micro-batch of the first launch (overrides the plan's; without a plan it enables OOM recovery).",
      min: 1,
    }),
    'grad-accum': Flags.integer({
      description: 'Gradient accumulation of the first launch (overrides the plan).',
      min: 1,
    }),
    'grad-ckpt': Flags.boolean({
      description: 'Gradient checkpointing on the first launch (overrides the plan).',
      allowNo: true,
    }),
    precision: Flags.option({
      description: 'Precision of the first launch (overrides the plan).',
      options: Precision.options,
    })(),
    'total-steps': Flags.integer({
      description: "Steps of the whole run, for the ETA (else the trainer's total or the plan's).",
      min: 1,
    }),
    'metrics-file': Flags.string({
      description: 'A file the trainer appends metrics to (JSON lines), followed as it grows.',
      helpValue: 'FILE',
    }),
    'status-seconds': numberFlag({
      description: 'Seconds between status lines when the output is not a terminal.',
      default: D.statusSeconds,
      helpValue: 'SECONDS',
    }),
    quiet: Flags.boolean({
      char: 'q',
      description: 'No live view or status lines; warnings and actions are still printed.',
      default: false,
    }),
    json: Flags.boolean({
      description: "Print every record as a JSON line on stdout (the trainer's output goes to stderr).",
      default: false,
    }),
    'oom-recovery': Flags.boolean({
      description: 'Relaunch after out-of-memory with smaller settings (--no-oom-recovery to switch off).',
      default: true,
      allowNo: true,
    }),
    thermal: Flags.boolean({
      description: 'Pause above --max-temp / --max-power (--no-thermal to switch off).',
      default: true,
      allowNo: true,
    }),
    battery: Flags.boolean({
      description: 'Pause below --min-battery on battery (--no-battery to switch off).',
      default: true,
      allowNo: true,
    }),
    'gpu-failover': Flags.boolean({
      description:
        'Relaunch on the remaining GPUs or the CPU when a GPU fails (--no-gpu-failover to switch off).',
      default: true,
      allowNo: true,
    }),
    report: reportFlag,
    calibration: Flags.boolean({
      description:
        "Record the run's steady-state tokens/s and peak memory in this machine's calibration store, which later plans correct their speed from (--no-calibration: do not).",
      allowNo: true,
      default: true,
    }),
    'hang-restart': Flags.boolean({
      description: 'Kill and relaunch a hung trainer (--no-hang-restart to only report it).',
      default: true,
      allowNo: true,
    }),
    'crash-restart': Flags.boolean({
      description: 'Relaunch after other failures (--no-crash-restart to switch off).',
      default: true,
      allowNo: true,
    }),
  }

  async run(): Promise<void> {
    // Everything after the first -- is the trainer's, verbatim: oclif only sees the monitor's own flags.
    const raw = [...this.argv]
    const separator = raw.indexOf('--')
    const { flags, argv } = await this.parse(Monitor, separator >= 0 ? raw.slice(0, separator) : raw)
    const command = separator >= 0 ? raw.slice(separator + 1) : (argv as string[])
    if (flags.json && flags.quiet) {
      throw new RigfitError('usage', 'E_USAGE', '--json and --quiet exclude each other', {
        suggestion: 'Use --json for JSON lines on stdout, or --quiet for a silent terminal.',
      })
    }
    if (command.length === 0) {
      throw new RigfitError('usage', 'E_NO_COMMAND', 'no training command given', {
        suggestion:
          'Put the training command after --, e.g. `rigfit monitor --plan plan.json -- python train.py`.',
      })
    }
    if (flags['metrics-file'] !== undefined) refuseIrregularMetricsFile(flags['metrics-file'])
    const configs =
      flags.configs === undefined
        ? null
        : { dir: resolve(flags.configs), manifest: await requireExportManifest(flags.configs) }
    // Without --plan, the plan the configs were exported from is the run's plan.
    const plan: TrainingPlan | null = flags.plan
      ? await readPlanFile(flags.plan, inputTimeoutMs(flags))
      : (configs?.manifest.exports[0]?.plan ?? null)
    const options = this.monitorOptions(flags, { command, plan, configs })
    // A report that could not be written is refused before the run, not after it.
    if (flags.report) await checkReportTarget(flags.report, flags.force)
    const result = await runMonitor(options, {
      stdout: process.stdout,
      stderr: process.stderr,
      color: this.colorEnabled && process.stderr.isTTY === true,
    })
    await this.afterRun(flags, options, result)
  }

  /** What `runMonitor` is told: the trainer's command, the plan and configs, limits, actions and the view. */
  private monitorOptions(
    flags: Interfaces.InferredFlags<typeof Monitor.flags>,
    run: Pick<MonitorOptions, 'command' | 'plan' | 'configs'>,
  ): MonitorOptions {
    const view: ViewMode = flags.json
      ? 'json'
      : flags.quiet
        ? 'quiet'
        : process.stderr.isTTY
          ? 'live'
          : 'plain'
    return {
      ...D,
      command: run.command,
      cwd: process.cwd(),
      env: process.env,
      plan: run.plan,
      planPath: flags.plan ? resolve(flags.plan) : null,
      configs: run.configs,
      overrides: {
        ...(flags['micro-batch'] !== undefined ? { microBatch: flags['micro-batch'] } : {}),
        ...(flags['grad-accum'] !== undefined ? { gradAccum: flags['grad-accum'] } : {}),
        ...(flags['grad-ckpt'] !== undefined ? { gradCheckpointing: flags['grad-ckpt'] } : {}),
        ...(flags.precision !== undefined ? { precision: flags.precision as Precision } : {}),
      },
      logDir: resolve(
        flags['log-dir'] ?? join('rigfit-runs', new Date().toISOString().replace(/[:.]/g, '-')),
      ),
      // One node of a multi-node Slurm job: every node records into the same folder, one log file each.
      node: multiNodeName(process.env),
      force: flags.force,
      maxLogMb: flags['max-log-mb'],
      intervalMs: flags['interval-ms'],
      maxRestarts: flags['max-restarts'],
      restartDelaySeconds: flags['restart-delay'],
      graceSeconds: flags['grace-seconds'],
      hangMinutes: flags['hang-minutes'],
      crashLoopFailures: flags['crash-loop-failures'],
      crashLoopMinutes: flags['crash-loop-minutes'],
      maxTempC: flags['max-temp'],
      tempHysteresisC: flags['temp-hysteresis'],
      maxPowerW: flags['max-power'] ?? null,
      powerHysteresisW: flags['power-hysteresis'] ?? null,
      minBatteryPercent: flags['min-battery'],
      totalSteps: flags['total-steps'] ?? null,
      metricsFile: flags['metrics-file'] ? resolve(flags['metrics-file']) : null,
      actions: {
        oomRecovery: flags['oom-recovery'],
        thermal: flags.thermal,
        battery: flags.battery,
        gpuFailover: flags['gpu-failover'],
        hangRestart: flags['hang-restart'],
        crashRestart: flags['crash-restart'],
      },
      view,
      statusSeconds: flags['status-seconds'],
      // Tests and unusual layouts point these at other trees; the defaults are the real ones.
      sysfsRoot: process.env.RIGFIT_SYSFS_ROOT ?? D.sysfsRoot,
      procRoot: process.env.RIGFIT_PROC_ROOT ?? D.procRoot,
    }
  }

  /** After the run: learn its speed, write the report, and exit as the run did (or as the monitor stopped it). */
  private async afterRun(
    flags: Interfaces.InferredFlags<typeof Monitor.flags>,
    options: MonitorOptions,
    result: Awaited<ReturnType<typeof runMonitor>>,
  ): Promise<void> {
    const { plan } = options
    const learned = !flags.calibration
      ? null
      : await learnFromRun(this, {
          plan,
          logFile: result.logFile,
          attempts: result.attempts,
          overridden: Object.keys(options.overrides).length > 0,
        })
    if (learned)
      this.logToStderr(
        `Measured ${Math.round(learned.measured.tokensPerSecond)} tokens/s (plan: ${Math.round(plan?.throughput.tokensPerSecond ?? 0)}); recorded in the calibration store for the next plan of this machine.`,
      )
    if (flags.report) {
      const report = await writeRunReport(
        flags.report,
        flags.force,
        options.logDir,
        plan,
        this.config.version,
      )
      this.logToStderr(`Report written to ${report.written}`)
    }
    if (result.stoppedByMonitor) {
      throw new RigfitError('child', 'E_MONITOR_STOPPED', `the monitor stopped the run: ${result.reason}`, {
        suggestion: result.suggestion ?? `See ${result.logFile}.`,
        details: { attempts: result.attempts, logFile: result.logFile },
      })
    }
    if (result.exitCode !== 0) this.exit(result.exitCode)
  }
}

/**
 * The metrics file is followed by its size as the trainer appends to it, so it must be a regular file (or not
 * exist yet): a FIFO or a device would never end, and reading one could stop the sampling.
 */
function refuseIrregularMetricsFile(path: string): void {
  let stats: ReturnType<typeof statSync>
  try {
    stats = statSync(path)
  } catch {
    return
  }
  if (stats.isFile()) return
  const kind = stats.isDirectory() ? 'a folder' : stats.isFIFO() ? 'a FIFO' : 'a device or socket'
  throw new RigfitError('io', 'E_METRICS_FILE', `--metrics-file ${path}: is ${kind}, not a regular file`, {
    suggestion: 'Give the file the trainer appends its metrics to (JSON lines); it may not exist yet.',
  })
}
