import type { ChildProcess } from 'node:child_process'
import { type GroupExit, ProcessGroup, type SpawnGroupOptions } from '../process/process-group.js'
import { type Sample, Sampler, type SamplerOptions } from '../sampling/sampler.js'
import { type Clock, systemClock, systemTimers, type Timers } from './clock.js'

/** The trainer's process group as the run drives it (ProcessGroup; tests script one). */
export interface TrainerGroup {
  readonly pid: number | undefined
  readonly child: Pick<ChildProcess, 'stdout' | 'stderr'>
  readonly exited: Promise<GroupExit>
  readonly closed: Promise<void>
  signal(signal: NodeJS.Signals): void
  terminate(first: NodeJS.Signals, graceMs: number): Promise<void>
  reap(graceMs: number): Promise<void>
  trackDescendants(): void
  /** Resident memory of the trainer's process tree in bytes; null when it cannot be read. */
  residentBytes(): number | null
  /** Stops reading the trainer's pipes (an orphan may keep them open). */
  detachOutput(): void
}

/** The machine's readings, one sample per interval (Sampler; tests script one). */
export interface SampleSource {
  /** Settles once the GPUs are known, or known to be unreadable. */
  readonly ready: Promise<void>
  on(event: 'sample', listener: (sample: Sample) => void): unknown
  on(event: 'notice', listener: (level: 'info' | 'warning', message: string) => void): unknown
  start(): void
  /** Ends the sampling tools; a promise settles once they are ended (bounded by a grace period). */
  stop(): void | Promise<void>
}

export type ProcessEvent = NodeJS.Signals | 'exit'

/** The parts of Node's `process` the run listens to. */
export interface ProcessHooks {
  on(event: ProcessEvent, listener: () => void): unknown
  off(event: ProcessEvent, listener: () => void): unknown
  readonly platform: NodeJS.Platform
}

/**
 * Everything the run takes from the outside world besides files: the clock, timers, the trainer's process,
 * the sampler and the monitor's own process. The defaults are the real ones; tests replace what they drive.
 */
export interface MonitorRuntime {
  clock: Clock
  timers: Timers
  spawnTrainer(command: string[], options: SpawnGroupOptions): TrainerGroup
  createSampler(options: SamplerOptions): SampleSource
  process: ProcessHooks
}

const systemProcess: ProcessHooks = {
  on: (event, listener) => process.on(event, listener),
  off: (event, listener) => process.off(event, listener),
  get platform() {
    return process.platform
  },
}

/** The given parts over the real ones; the sampler gets the run's clock and timers. */
export function resolveRuntime(given: Partial<MonitorRuntime> = {}): MonitorRuntime {
  const clock = given.clock ?? systemClock
  const timers = given.timers ?? systemTimers
  return {
    clock,
    timers,
    spawnTrainer: given.spawnTrainer ?? ((command, options) => ProcessGroup.spawn(command, options)),
    createSampler: given.createSampler ?? ((options) => new Sampler({ clock, timers, ...options })),
    process: given.process ?? systemProcess,
  }
}
