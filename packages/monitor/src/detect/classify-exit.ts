import { constants as osConstants } from 'node:os'
import type { ExitCause } from '@rigfit/core'

export interface ExitStatus {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface ExitEvidence {
  /** The user asked to stop (Ctrl-C, SIGTERM, SIGHUP to the monitor). */
  interrupted: boolean
  /** The monitor killed the trainer because it made no progress. */
  hangKilled: boolean
  /** The monitor killed the trainer because a device it used disappeared. */
  deviceLost: boolean
  /** The trainer printed a GPU out-of-memory message. */
  gpuOom: boolean
  /** The trainer printed a device failure message. */
  deviceError: boolean
}

/** Exit code 137 is how shells report a child killed by SIGKILL (128 + 9). */
const SHELL_SIGKILL_CODE = 137

/**
 * Why an attempt ended. What the monitor did itself comes first; a clean exit is a success even after an OOM
 * message (trainers that retry smaller batches themselves recover in-process); then what the output said;
 * then SIGKILL from outside, which on Linux is almost always the kernel's OOM killer.
 */
export function classifyExit(status: ExitStatus, evidence: ExitEvidence): ExitCause {
  if (evidence.interrupted) return 'interrupted'
  if (evidence.hangKilled) return 'hang'
  if (evidence.deviceLost) return 'device-lost'
  if (status.code === 0 && status.signal === null) return 'success'
  if (evidence.gpuOom) return 'gpu-oom'
  if (evidence.deviceError) return 'device-error'
  if (status.signal === 'SIGKILL' || status.code === SHELL_SIGKILL_CODE) return 'host-oom-kill'
  return 'crash'
}

/** The exit code to pass on: the shell's convention makes a signal death 128 + the signal number. */
export function exitCodeOf(status: ExitStatus): number {
  if (status.code !== null) return status.code
  if (status.signal !== null) return 128 + (osConstants.signals[status.signal] ?? 0)
  return 1
}
