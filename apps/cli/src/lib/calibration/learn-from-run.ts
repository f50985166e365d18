import { readFile } from 'node:fs/promises'
import type { Command } from '@oclif/core'
import type { CalibrationRecord, TrainingPlan } from '@rigfit/core'
import { resolveProfile } from '../profile-source.js'
import { calibrationRecord } from './build-record.js'
import { stepSample } from './measure.js'
import { appendCalibrationRecord, calibrationStorePath } from './store.js'

/** Speed reports of a run needed after its first (warm-up) one before its steady state is recorded. */
const MIN_STEADY_REPORTS = 3

interface LogLine {
  type?: string
  attempt?: number
  tokensPerSecond?: number | null
  stream?: string
  line?: string
}

/** The steady state of a supervised run from its record: speed after warm-up, peak memory the trainer reported. */
export function steadyState(logText: string, tokensPerStep: number) {
  const lines = logText
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as LogLine
      } catch {
        return {} as LogLine
      }
    })
  const attempt = Math.max(0, ...lines.map((l) => l.attempt ?? 0))
  const rates = lines
    .filter((l) => l.type === 'metrics' && l.attempt === attempt && typeof l.tokensPerSecond === 'number')
    .map((l) => l.tokensPerSecond as number)
    .filter((rate) => rate > 0)
    .slice(1)
  if (rates.length < MIN_STEADY_REPORTS) return null
  let peakAllocated: number | null = null
  let peakReserved: number | null = null
  let plain = false
  for (const l of lines) {
    if (l.type !== 'output' || l.attempt !== attempt || typeof l.line !== 'string') continue
    if (l.stream === 'stderr' && l.line.startsWith('rigfit train: ')) plain = true
    const sample = stepSample(l.line)
    if (sample?.maxMemoryAllocated != null)
      peakAllocated = Math.max(peakAllocated ?? 0, sample.maxMemoryAllocated)
    if (sample?.maxMemoryReserved != null)
      peakReserved = Math.max(peakReserved ?? 0, sample.maxMemoryReserved)
  }
  const seconds = rates.reduce((sum, rate) => sum + tokensPerStep / rate, 0)
  return {
    // rigfit's own trainer states its settings on stderr; a Hugging Face Trainer prints Python dicts.
    stack: plain
      ? 'plain'
      : lines.some((l) => l.type === 'metrics' && (l as { source?: string }).source === 'hf')
        ? 'hf'
        : 'other',
    measured: {
      tokensPerSecond: (tokensPerStep * rates.length) / seconds,
      stepSeconds: seconds / rates.length,
      steps: rates.length,
      seconds,
      peakAllocatedBytes: peakAllocated,
      peakReservedBytes: peakReserved,
    },
  }
}

/**
 * After a supervised run of a plan: its steady-state speed and peak memory go into the calibration store, so the
 * next plan of this machine learns from it. Only a run of the plan as written (one attempt, no overrides) is
 * recorded; a run that reported too few steps is not. Never fails the run: a problem is a warning.
 */
export async function learnFromRun(
  command: Command,
  input: { plan: TrainingPlan | null; logFile: string; attempts: number; overridden: boolean },
): Promise<CalibrationRecord | null> {
  const { plan } = input
  if (plan === null || input.overridden || input.attempts !== 1) return null
  try {
    const s = plan.settings
    const tokensPerStep = s.microBatch * s.gradAccum * Math.max(1, s.gpus) * s.nodes * s.seq
    const steady = steadyState(await readFile(input.logFile, 'utf8'), tokensPerStep)
    if (steady === null) return null
    const record = calibrationRecord({
      source: 'monitor',
      profile: await resolveProfile(command, {}),
      plan,
      stack: { name: steady.stack, version: null },
      versions: {},
      measured: steady.measured,
      recordedAt: new Date().toISOString(),
    })
    const store = calibrationStorePath(command.config.configDir)
    await appendCalibrationRecord(store, record)
    return record
  } catch (error) {
    command.warn(
      `the run's measured speed was not recorded in the calibration store: ${(error as Error).message}`,
    )
    return null
  }
}
