import { BoundedLines, RigfitError } from '@rigfit/core'
import { metricsFromObject, OutputLines, ProcessGroup } from '@rigfit/monitor'
import { type SeriesFigures, type StepSample, StepSeries } from './step-series.js'

export interface MeasureRequest {
  command: string[]
  cwd: string
  env: NodeJS.ProcessEnv
  /** Tokens of one optimizer step of the whole job. */
  tokensPerStep: number
  warmupSteps: number
  /** Budget for the timed steps. */
  seconds: number
  /** Longest wait for the first step (interpreter, imports, building the model). */
  startSeconds: number
  onProgress?: (progress: { fraction: number; tokensPerSecond: number | null; steps: number }) => void
  /** Resolves when the user interrupts: the child is stopped and the measurement fails. */
  interrupted?: Promise<void>
}

export interface Measurement extends SeriesFigures {
  peakAllocatedBytes: number | null
  peakReservedBytes: number | null
  /** How it ended: stable before the budget, or at the budget. */
  ended: 'stable' | 'budget'
}

const STDERR_TAIL = 12

/** One step line of the trainer (the JSON lines `rigfit monitor` reads), or null for any other line. */
export function stepSample(line: string): StepSample | null {
  const open = line.indexOf('{')
  if (open < 0) return null
  let raw: unknown
  try {
    raw = JSON.parse(line.slice(open))
  } catch {
    return null
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null
  const object = raw as Record<string, unknown>
  // A step that saved a checkpoint is not a training step's time.
  if (object.checkpoint_seconds !== undefined) return null
  const metrics = metricsFromObject(object)
  if (metrics?.step === undefined || metrics.tokensPerSecond === undefined) return null
  const bytes = (value: unknown) => (typeof value === 'number' && value >= 0 ? value : null)
  return {
    step: metrics.step,
    tokensPerSecond: metrics.tokensPerSecond,
    maxMemoryAllocated: bytes(object.max_memory_allocated),
    maxMemoryReserved: bytes(object.max_memory_reserved),
  }
}

/**
 * Runs the measuring trainer in a process group of its own (with the monitor's watchdog, so it never outlives
 * rigfit), reads its step lines, and stops it as soon as the speed is stable or the budget is spent. Every way it
 * can fail is an error naming what failed, with the trainer's last lines of stderr: exit 9.
 */
export async function measureTraining(request: MeasureRequest): Promise<Measurement> {
  const series = new StepSeries(request.tokensPerStep, request.warmupSteps)
  const stderrTail: string[] = []
  let peakAllocated: number | null = null
  let peakReserved: number | null = null
  let timedStartMs: number | null = null
  let settle: (ended: Measurement['ended'] | Error) => void = () => {}
  const finished = new Promise<Measurement['ended'] | Error>((resolve) => {
    settle = resolve
  })
  const group = ProcessGroup.spawn(request.command, { cwd: request.cwd, env: request.env, procRoot: '/proc' })
  const stdout = new OutputLines((text, kind) => {
    if (kind !== 'line') return
    const sample = stepSample(text)
    if (!sample) return
    peakAllocated = sample.maxMemoryAllocated ?? peakAllocated
    peakReserved = sample.maxMemoryReserved ?? peakReserved
    if (series.add(sample)) timedStartMs ??= Date.now()
    const figures = series.figures()
    request.onProgress?.({
      fraction: Math.min(1, series.timedSeconds / request.seconds),
      tokensPerSecond: figures?.tokensPerSecond ?? null,
      steps: series.timedSteps,
    })
    if (series.timedSeconds >= request.seconds) settle('budget')
    else if (series.stable(Math.min(5, request.seconds / 2))) settle('stable')
  })
  const stderr = new BoundedLines(4000, (line) => {
    stderrTail.push(line)
    if (stderrTail.length > STDERR_TAIL) stderrTail.shift()
  })
  group.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => stdout.push(chunk))
  group.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk))
  const tail = () => (stderrTail.length > 0 ? `\n${stderrTail.join('\n')}` : '')
  const command = request.command.join(' ')
  void group.exited.then(async (exit) => {
    await group.closed
    settle(exitError(exit, request.command, series.timedSteps, tail()))
  })
  // Wall-clock guards: the first step must come, and the budget must end, even if the trainer stalls.
  const startTimer = setTimeout(
    () => {
      if (series.timedSteps === 0 && timedStartMs === null) settle(noStepError(request, command, tail()))
    },
    (request.startSeconds + request.seconds) * 1000,
  )
  const budgetTimer = setInterval(() => {
    if (timedStartMs !== null && Date.now() - timedStartMs > request.seconds * 3000) settle('budget')
  }, 500)
  void request.interrupted?.then(() =>
    settle(
      new RigfitError('child', 'E_CALIBRATE_INTERRUPTED', 'calibration interrupted; nothing was written'),
    ),
  )
  const ended = await finished
  clearTimeout(startTimer)
  clearInterval(budgetTimer)
  await group.terminate('SIGKILL', 2000)
  group.detachOutput()
  if (ended instanceof Error) throw ended
  const figures = series.figures()
  if (!figures) {
    throw new RigfitError(
      'child',
      'E_CALIBRATE_NO_STEP',
      `the measuring trainer timed no step after its warm-up: ${command}${tail()}`,
      {
        suggestion: 'Pass a larger --seconds.',
      },
    )
  }
  return { ...figures, peakAllocatedBytes: peakAllocated, peakReservedBytes: peakReserved, ended }
}

/** Why the measuring trainer's exit ends the measurement: it could not start, or it ended before the budget. */
function exitError(
  exit: { spawnError?: NodeJS.ErrnoException | null | undefined; signal: string | null; code: number | null },
  argv: readonly string[],
  timedSteps: number,
  tail: string,
): RigfitError {
  if (exit.spawnError) {
    return new RigfitError(
      'child',
      'E_CALIBRATE_SPAWN',
      `cannot start ${argv[0]}: ${exit.spawnError.code ?? exit.spawnError.message}`,
      { suggestion: 'Pass --python with the path of a Python that has PyTorch.' },
    )
  }
  // Ended before the measurement did: what it measured stands only if the budget's worth was timed.
  return new RigfitError(
    'child',
    'E_CALIBRATE_CHILD_EXIT',
    `the measuring trainer exited (${exit.signal ?? `code ${exit.code}`}) after ${timedSteps} timed step(s): ${argv.join(' ')}${tail}`,
    { suggestion: 'Its last lines above say why; a smaller micro-batch or model fits where memory ran out.' },
  )
}

/** The first timed step never came within the start allowance and the budget. */
function noStepError(request: MeasureRequest, command: string, tail: string): RigfitError {
  return new RigfitError(
    'child',
    'E_CALIBRATE_NO_STEP',
    `the measuring trainer timed no step within ${request.startSeconds + request.seconds} s: ${command}${tail}`,
    { suggestion: 'A model this large needs a longer budget: pass a larger --seconds.' },
  )
}
