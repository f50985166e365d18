import type { ExitCause, LaunchSettings, MonitorCause } from '@rigfit/core'
import { replanForGpus } from '../act/gpu-failover.js'
import { nextOomSettings } from '../act/oom-ladder.js'
import type { ExitStatus } from '../detect/classify-exit.js'
import type { MonitorActions } from '../options.js'

export type FailureCause = Exclude<ExitCause, 'success' | 'interrupted'>

export interface RelaunchInput {
  cause: FailureCause
  exit: ExitStatus
  actions: MonitorActions
  settings: LaunchSettings | null
  computeCapability: string | null
  /** This host's CPU has bf16 instructions (AVX512_BF16 or AMX): a CPU run's fp32 → bf16-mixed rung. */
  cpuBf16?: boolean
  /** Physical indexes of the GPUs the failed attempt used. */
  inUse: readonly number[]
  visibleDevices: readonly number[] | null
  /** GPUs that disappeared from the samples during the attempt. */
  lostDevices: readonly number[]
  /** The device the trainer's failure message named, as the trainer numbers it. */
  deviceErrorIndex: number | null
}

export type RelaunchPlan =
  /** Launch again with these settings and GPUs (null: unchanged); `changed` says whether anything differs. */
  | {
      kind: 'relaunch'
      settings: LaunchSettings | null
      visible: number[] | null
      changes: string[]
      changed: boolean
      warnings: string[]
    }
  /** Give up with the trainer's exit code; `skipped` names the action that was switched off. */
  | { kind: 'fail'; reason: string; skipped: { cause: MonitorCause; reason: string } | null }
  /** The monitor stops the run: nothing it can change would help. */
  | { kind: 'stop'; cause: MonitorCause; reason: string; suggestion: string }

type Relaunch = Extract<RelaunchPlan, { kind: 'relaunch' }>

const OOM_SUGGESTION =
  'Shorten the sequence, switch to LoRA/QLoRA, use an 8-bit optimizer, optimizer offload or ZeRO, or a smaller model (`rigfit plan` re-plans).'

export function describeExit(exit: ExitStatus): string {
  return exit.signal !== null ? exit.signal : `exit code ${exit.code}`
}

/** The failure in words, for actions, the summary and the terminal. */
export function describeFailure(cause: FailureCause, exit: ExitStatus): string {
  switch (cause) {
    case 'gpu-oom':
      return `the trainer ran out of GPU memory (${describeExit(exit)})`
    case 'host-oom-kill':
      return `the trainer was killed by SIGKILL (${describeExit(exit)}), most likely by the kernel's OOM killer`
    case 'device-lost':
      return 'a GPU disappeared'
    case 'device-error':
      return `the trainer reported a device failure (${describeExit(exit)})`
    case 'hang':
      return 'the trainer made no progress'
    default:
      return `the trainer failed (${describeExit(exit)})`
  }
}

function actionOff(cause: MonitorCause, what: string, action: string, flag: string): RelaunchPlan {
  const reason = `${what}; ${action} is switched off (${flag})`
  return { kind: 'fail', reason, skipped: { cause, reason } }
}

/**
 * What to launch after a failure, before the retry limit and crash-loop checks: a smaller rung of the OOM
 * ladder, the remaining GPUs (or the CPU) after a device failure, the same launch after a hang or a crash, or
 * no launch when the action is switched off or nothing is left to try.
 */
export function planRelaunch(input: RelaunchInput): RelaunchPlan {
  const { cause, actions } = input
  const what = describeFailure(cause, input.exit)
  const same: Relaunch = {
    kind: 'relaunch',
    settings: input.settings,
    visible: null,
    changes: [],
    changed: false,
    warnings: [],
  }
  if (cause === 'gpu-oom' || cause === 'host-oom-kill') {
    if (!actions.oomRecovery) return actionOff(cause, what, 'OOM recovery', '--no-oom-recovery')
    if (input.settings === null) {
      return {
        kind: 'fail',
        reason: `${what}; OOM recovery needs the batch settings (pass --plan or --micro-batch)`,
        skipped: null,
      }
    }
    const step = nextOomSettings(input.settings, input.computeCapability, input.cpuBf16)
    if ('exhausted' in step) {
      return {
        kind: 'stop',
        cause: 'recovery-exhausted',
        reason: `${what}; nothing left that keeps the training the same: ${step.tried.join(', ')}`,
        suggestion: OOM_SUGGESTION,
      }
    }
    return {
      kind: 'relaunch',
      settings: step.settings,
      visible: null,
      changes: step.changes,
      changed: true,
      warnings: [],
    }
  }
  if (cause === 'device-lost' || cause === 'device-error') {
    if (!actions.gpuFailover) return actionOff(cause, what, 'GPU failover', '--no-gpu-failover')
    return failover(input, same)
  }
  if (cause === 'crash' && !actions.crashRestart)
    return actionOff('crash', what, 'relaunch after a crash', '--no-crash-restart')
  return same
}

/** Drops the failed devices and re-plans the batch for the ones left (the CPU when none is). */
function failover(input: RelaunchInput, same: Relaunch): RelaunchPlan {
  const current = [...input.inUse]
  let lost = [...input.lostDevices]
  if (input.cause === 'device-error') {
    const logical = input.deviceErrorIndex
    const named = logical === null ? undefined : (input.visibleDevices ?? current)[logical]
    lost = named !== undefined ? [named] : current.length === 1 ? current : []
  }
  if (lost.length === 0) {
    return {
      ...same,
      warnings: ['The failing device could not be identified; relaunching on the same GPUs.'],
    }
  }
  const remaining = current.filter((index) => !lost.includes(index))
  const warnings =
    remaining.length === 0 ? ['No GPU is left: relaunching on the CPU, which is far slower.'] : []
  const where = remaining.length === 0 ? 'the CPU' : `GPU ${remaining.join(',')}`
  const dropped = `GPU ${lost.join(',')} dropped: running on ${where}`
  if (input.settings === null) {
    return {
      kind: 'relaunch',
      settings: null,
      visible: remaining,
      changes: [dropped],
      changed: true,
      warnings,
    }
  }
  const replanned = replanForGpus(input.settings, remaining.length)
  return {
    kind: 'relaunch',
    settings: replanned.settings,
    visible: remaining,
    changes: [dropped, ...replanned.changes.slice(1)],
    changed: true,
    warnings,
  }
}
