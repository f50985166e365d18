import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Flags } from '@oclif/core'
import {
  type CalibrationRecord,
  type HardwareProfile,
  MODES,
  type Mode,
  RigfitError,
  type TrainingPlan,
} from '@rigfit/core'
import { readPlanFile } from '@rigfit/exporters'
import { RigfitCommand } from '../lib/base-command.js'
import { calibrationRecord, modelPrediction } from '../lib/calibration/build-record.js'
import { measureTraining } from '../lib/calibration/measure.js'
import { progressBar } from '../lib/calibration/progress-bar.js'
import {
  CALIBRATE_STACKS,
  type CalibrateStack,
  probeStack,
  stackScript,
} from '../lib/calibration/python-stack.js'
import { renderRecords } from '../lib/calibration/render-records.js'
import {
  appendCalibrationRecord,
  calibrationStorePath,
  clearCalibrationStore,
  readCalibrationStore,
} from '../lib/calibration/store.js'
import { fmtCount } from '../lib/format.js'
import { inputTimeoutFlags, inputTimeoutMs } from '../lib/input-timeout.js'
import { planModes } from '../lib/planning.js'
import { resolveProfile } from '../lib/profile-source.js'
import { workloadFlags, workloadFromFlags } from '../lib/workload-flags.js'

/** Optimizer steps the trainer is allowed: more than any budget reaches; rigfit stops it. */
const UNBOUNDED_STEPS = 100_000_000

export default class Calibrate extends RigfitCommand {
  static override summary = "Measure this machine's real training speed and memory for a plan, and record it."
  static override description =
    "Trains the plan's model (built from its config with random weights, nothing downloaded) with the plan's settings on this machine through the chosen stack: rigfit's own trainer (plain) or Transformers + PEFT's Trainer (hf). After a few warm-up steps it times steps until the speed is stable, within --seconds, and appends tokens/s, step time and, on GPUs, peak allocated and reserved memory to the calibration store ($XDG_CONFIG_HOME/rigfit/calibration.jsonl) with the machine's fingerprint, the stack, the versions and the settings. plan, estimate, analyze, explain and report correct their speed from it (--no-calibration: they do not)."
  static override examples = [
    '<%= config.bin %> calibrate --model examples/pytorch/tiny-llama.json --seq 128 --target-batch 16 --time-budget 5m',
    '<%= config.bin %> calibrate --plan plan.json --seconds 60',
    '<%= config.bin %> calibrate --plan plan.json --stack hf',
    '<%= config.bin %> calibrate --list',
    '<%= config.bin %> calibrate --clear',
  ]
  static override flags = {
    ...inputTimeoutFlags,
    plan: Flags.string({
      description:
        "Measure this plan (rigfit plan --json, or an export's rigfit-plan.json) instead of planning with the flags.",
      helpValue: 'FILE',
      exclusive: ['mode', 'model', 'list', 'clear'],
    }),
    mode: Flags.string({
      description: 'Plan this mode with the flags, and measure it.',
      options: [...MODES],
      default: 'balanced',
    }),
    seconds: Flags.integer({
      description: 'Budget for the timed steps, after warm-up; stops earlier once the speed is stable.',
      default: 30,
      min: 1,
      max: 3600,
    }),
    'warmup-steps': Flags.integer({
      description: 'Steps run before timing starts.',
      default: 3,
      min: 1,
      max: 1000,
    }),
    stack: Flags.string({
      description: "What trains: rigfit's own trainer (plain), or Transformers + PEFT's Trainer (hf).",
      options: [...CALIBRATE_STACKS],
      default: 'plain',
    }),
    python: Flags.string({
      description: 'The Python that has PyTorch (and the stack).',
      default: 'python3',
      helpValue: 'PATH',
    }),
    list: Flags.boolean({ description: 'Show the calibration store and exit.', exclusive: ['clear'] }),
    clear: Flags.boolean({ description: 'Empty the calibration store and exit.' }),
    ...workloadFlags,
  }

  async run(): Promise<unknown> {
    const { flags } = await this.parse(Calibrate)
    const store = calibrationStorePath(this.config.configDir)
    if (flags.list) return this.list(store)
    if (flags.clear) {
      const removed = await clearCalibrationStore(store)
      if (!this.jsonEnabled()) this.log(`Removed ${removed} record(s) from ${store}.`)
      return { store, removed }
    }
    const stack = flags.stack as CalibrateStack
    const { versions, device } = await probeStack(flags.python, stack)
    const profile = await resolveProfile(this, {})
    const plan = flags.plan
      ? await readPlanFile(flags.plan, inputTimeoutMs(flags))
      : await this.planFor(profile, flags.mode as Mode, await workloadFromFlags(flags, this.config.cacheDir))
    if (plan.settings.nodes > 1) {
      throw new RigfitError(
        'usage',
        'E_CALIBRATE_NODES',
        `the plan trains on ${plan.settings.nodes} nodes; calibrate measures one machine`,
        {
          suggestion:
            'Calibrate a one-node plan of the same model and settings; `rigfit monitor` records the multi-node run.',
        },
      )
    }
    if (plan.settings.device !== device && !(plan.settings.device === 'rocm' && device === 'cuda')) {
      throw new RigfitError(
        'hardware',
        'E_CALIBRATE_DEVICE',
        `the plan trains on ${plan.settings.device}, but PyTorch in ${flags.python} sees ${device}`,
        {
          suggestion:
            'Plan for this machine (rigfit plan without --gpu/--from), or use a PyTorch built for the device.',
        },
      )
    }
    const measured = await this.measure(plan, stack, flags.python, flags.seconds, flags['warmup-steps'])
    const record = calibrationRecord({
      source: 'calibrate',
      profile,
      plan,
      stack: {
        name: stack,
        version: stack === 'hf' ? (versions.transformers ?? null) : (versions.torch ?? null),
      },
      versions,
      measured,
      recordedAt: new Date().toISOString(),
    })
    await appendCalibrationRecord(store, record)
    if (!this.jsonEnabled()) this.log(summary(record, measured.ended, store))
    return {
      store,
      record,
      predictedTokensPerSecond: modelPrediction(plan),
      ratio: record.measured.tokensPerSecond / modelPrediction(plan),
    }
  }

  private async list(store: string): Promise<unknown> {
    const { records, skipped } = await readCalibrationStore(store)
    for (const line of skipped) this.warn(`skipped ${line}`)
    if (!this.jsonEnabled()) this.log(renderRecords(store, records))
    return { store, records }
  }

  /** The plan the flags describe, for this machine, from the speed model alone (the store is what it measures). */
  private async planFor(
    profile: HardwareProfile,
    mode: Mode,
    workload: Awaited<ReturnType<typeof workloadFromFlags>>,
  ) {
    const { plans, failures } = await planModes(this, profile, workload, [mode], {
      createdAt: new Date().toISOString(),
      useCalibration: false,
    })
    const plan = plans[mode]
    if (!plan) throw failures[mode] ?? new Error(`no ${mode} plan`)
    return plan
  }

  private async measure(
    plan: TrainingPlan,
    stack: CalibrateStack,
    python: string,
    seconds: number,
    warmup: number,
  ) {
    const script = stackScript(stack)
    const work = await mkdtemp(join(tmpdir(), 'rigfit-calibrate-'))
    const bar = this.jsonEnabled() ? null : progressBar(process.stderr, seconds)
    let onSignal: (() => void) | null = null
    const interrupted = new Promise<void>((resolve) => {
      onSignal = resolve
    })
    const stop = () => onSignal?.()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    try {
      const planFile = join(work, 'rigfit-plan.json')
      await writeFile(planFile, `${JSON.stringify(plan)}\n`)
      const gpus = plan.settings.gpus
      const launcher =
        gpus > 1
          ? [python, '-m', 'torch.distributed.run', '--standalone', `--nproc_per_node=${gpus}`]
          : [python]
      const args =
        stack === 'plain'
          ? [
              '--plan',
              planFile,
              '--out',
              join(work, 'checkpoints'),
              '--max-steps',
              String(UNBOUNDED_STEPS),
              '--log-every',
              '1',
              '--no-resume',
            ]
          : ['--plan', planFile, '--max-steps', String(UNBOUNDED_STEPS)]
      // The monitor's overrides (RIGFIT_*) are for supervised runs: the measurement runs the plan as written.
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !key.startsWith('RIGFIT_')),
      )
      return await measureTraining({
        command: [...launcher, script, ...args],
        cwd: work,
        env: { ...env, PYTHONDONTWRITEBYTECODE: '1' },
        tokensPerStep:
          plan.settings.microBatch * plan.settings.gradAccum * Math.max(1, gpus) * plan.settings.seq,
        warmupSteps: warmup,
        seconds,
        startSeconds: 300,
        interrupted,
        ...(bar ? { onProgress: bar.update } : {}),
      })
    } finally {
      bar?.done()
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      await rm(work, { recursive: true, force: true })
    }
  }
}

function summary(record: CalibrationRecord, ended: 'stable' | 'budget', store: string): string {
  const m = record.measured
  const ratio = m.tokensPerSecond / record.predicted.tokensPerSecond
  const memory =
    m.peakAllocatedBytes !== null
      ? `; peak allocated ${(m.peakAllocatedBytes / 2 ** 30).toFixed(2)} GiB${m.peakReservedBytes !== null ? `, reserved ${(m.peakReservedBytes / 2 ** 30).toFixed(2)} GiB` : ''}`
      : ''
  return [
    `Measured on this machine: ${fmtCount(m.tokensPerSecond)} tokens/s, ${m.stepSeconds.toFixed(3)} s per step (${m.steps} steps in ${m.seconds.toFixed(1)} s, ${ended === 'stable' ? 'stable' : 'at the --seconds budget'})${memory}`,
    `  ${record.device.name} (${record.device.kind} x${record.device.count}), stack ${record.stack.name}${record.stack.version ? `@${record.stack.version}` : ''}, torch ${record.versions.torch ?? '?'}`,
    `  rigfit's model predicted ${fmtCount(record.predicted.tokensPerSecond)} tokens/s: measured is x${ratio.toFixed(2)} of it`,
    `Recorded in ${store}: plan, estimate, analyze and report now use it (--no-calibration to leave it out).`,
  ].join('\n')
}
