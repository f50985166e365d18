import { type ExitCause, RigfitError, type TrainingPlan } from '@rigfit/core'
import { configsForLaunch, type ExportedConfigs, type LaunchConfigs } from '../act/launch-configs.js'
import { CONFIG_DIR_VARIABLE, deviceSelectionEnv, launchEnv } from '../act/launch-settings.js'
import { planForLaunch, writePlanCopy } from '../act/plan-copy.js'
import { describeChanges } from '../act/reestimate-copy.js'
import { classifyExit, type ExitStatus } from '../detect/classify-exit.js'
import { OutputLines } from '../process/output-lines.js'
import { readHostCpuDevice } from '../sampling/host-cpu-device.js'
import { MemoryWatch } from '../watch/memory-watch.js'
import { type Attempt, newAttempt, stopAttempt } from './attempt.js'
import type { DeviceWatch } from './device-watch.js'
import type { RunContext } from './run-context.js'
import type { TrainerOutput } from './trainer-output.js'

/** After the trainer exits, how long its last output may take to arrive through the pipes. */
const DRAIN_OUTPUT_MS = 1000

export interface AttemptEnd {
  cause: ExitCause
  exit: ExitStatus
  state: Attempt
}

/**
 * One launch: writes the plan copy, starts the trainer with the RIGFIT_* environment, wires its output to the
 * monitor, waits for the whole tree to end and records how it ended.
 */
export class AttemptLauncher {
  constructor(
    private readonly run: RunContext,
    private readonly output: TrainerOutput,
    private readonly devices: DeviceWatch,
  ) {}

  async launch(): Promise<AttemptEnd> {
    const { options: o, state: run, clock } = this.run
    run.attemptCount += 1
    const number = run.attemptCount
    let planFile: string | null = null
    let configs: LaunchConfigs | null = null
    if (o.plan !== null && run.settings !== null) {
      const plan = planForLaunch(o.plan, run.settings, run.notes, (memoryBytes) =>
        readHostCpuDevice({ procRoot: o.procRoot, sysfsRoot: o.sysfsRoot, memoryBytes }),
      )
      planFile = await writePlanCopy(o.logDir, number, plan)
      run.predictedBytes = plan.settings.device === 'cpu' ? null : plan.memory.perDevice.total
      if (o.configs !== null) configs = await this.configsFor(o.configs, o.plan, plan, number)
    }
    const rigfitEnv = {
      ...launchEnv(run.settings, number, planFile),
      ...(configs === null ? {} : { [CONFIG_DIR_VARIABLE]: configs.dir }),
      ...deviceSelectionEnv(run.visibleDevices, run.vendor),
    }
    const command = configs?.command ?? o.command
    const group = this.run.runtime.spawnTrainer(command, {
      cwd: o.cwd,
      // Python buffers a pipe's output in blocks; metrics must arrive as they are printed.
      env: { ...o.env, PYTHONUNBUFFERED: o.env.PYTHONUNBUFFERED ?? '1', ...rigfitEnv },
      // The trainer's process tree is the machine's own, whatever root the readings come from.
      procRoot: '/proc',
    })
    const state = newAttempt(number, group, clock.nowMs(), clock.activeSeconds())
    const splitters = (['stdout', 'stderr'] as const).map((stream) => {
      const lines = new OutputLines((text, kind) => this.output.onOutput(state, stream, text, kind))
      const source = group.child[stream]
      source?.setEncoding('utf8')
      source?.on('data', (chunk: string) => {
        this.run.view.raw(stream, chunk)
        lines.push(chunk)
      })
      return lines
    })
    if (group.pid !== undefined) this.started(state, planFile, rigfitEnv, configs)
    const exit = await group.exited
    if (exit.spawnError !== null) this.commandFailed(exit.spawnError, number)
    await group.reap(o.graceSeconds * 1000)
    await this.run.sleeper.sleep(DRAIN_OUTPUT_MS, group.closed)
    // Whatever could not be ended (another user's process) must not keep the monitor waiting on its pipes.
    group.detachOutput()
    for (const lines of splitters) lines.flush()
    this.output.pollMetricsFile()
    run.current = null
    const cause = classifyExit(exit, state.evidence)
    this.run.recorder.record({
      type: 'exit',
      time: clock.iso(),
      attempt: number,
      code: exit.code,
      signal: exit.signal,
      cause,
      durationSeconds: (clock.nowMs() - state.startedAtMs) / 1000,
      lastStep: state.lastStep,
    })
    return { cause, exit, state }
  }

  /** The exported configs of this launch, made again when its settings differ from the plan's. */
  private async configsFor(
    configs: ExportedConfigs,
    plan: TrainingPlan,
    launchPlan: TrainingPlan,
    attempt: number,
  ): Promise<LaunchConfigs> {
    const { options: o, view } = this.run
    const changed = describeChanges(plan.settings, launchPlan.settings) !== ''
    const launch = await configsForLaunch(configs, launchPlan, changed, o.command, o.cwd, o.logDir, attempt)
    if (changed) {
      view.notify(
        'info',
        `attempt ${attempt}: exported configs made again for the new settings in ${launch.dir}`,
      )
    }
    if (launch.edited.length > 0) {
      view.notify(
        'warning',
        `attempt ${attempt}: ${launch.edited.join(', ')} changed since \`rigfit export\`; the copies made again ` +
          'for this launch do not carry those edits',
      )
    }
    return launch
  }

  private started(
    state: Attempt,
    planFile: string | null,
    env: Record<string, string>,
    configs: LaunchConfigs | null,
  ): void {
    const { state: run, options } = this.run
    const pid = state.group.pid as number
    run.current = state
    this.run.progress.startAttempt()
    run.stepMemory = new MemoryWatch('step')
    run.timeMemory = new MemoryWatch('second')
    this.devices.startAttempt()
    this.run.recorder.record({
      type: 'launch',
      time: this.run.clock.iso(),
      attempt: state.number,
      pid,
      planFile,
      settings: run.settings,
      visibleDevices: run.visibleDevices,
      env,
      ...(configs === null ? {} : { configDir: configs.dir }),
      ...(configs === null || configs.command === options.command ? {} : { command: configs.command }),
    })
    this.run.view.notify('info', `attempt ${state.number}: started ${options.command.join(' ')} (pid ${pid})`)
    if (this.run.pause.paused) state.group.signal('SIGSTOP')
    if (run.interrupted !== null) stopAttempt(state, run.interrupted, options.graceSeconds * 1000)
  }

  private commandFailed(error: NodeJS.ErrnoException, attempt: number): never {
    const command = this.run.options.command[0] ?? ''
    if (error.code === 'ENOENT') {
      throw new RigfitError(
        'input',
        'E_COMMAND_NOT_FOUND',
        `cannot run "${command}" (attempt ${attempt}): not found`,
        {
          suggestion: 'Check the spelling, or give the full path of the program after --.',
        },
      )
    }
    throw new RigfitError(
      'input',
      'E_COMMAND_START',
      `cannot run "${command}" (attempt ${attempt}): ${error.code ?? error.message}`,
      {
        suggestion:
          error.code === 'EACCES'
            ? `Make it executable (chmod +x ${command}) or run it through its interpreter.`
            : undefined,
      },
    )
  }
}
