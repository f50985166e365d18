import type { Command } from '@oclif/core'
import {
  type Advice,
  type HardwareProfile,
  isRigfitError,
  type Mode,
  planMode,
  type RigfitError,
  type SearchPlanOptions,
  type TrainingPlan,
  type Workload,
} from '@rigfit/core'
import { assumptionNotices } from '@rigfit/profiler'
import { loadCalibration } from './calibration/calibration-flags.js'
import { formatProblem, loadAllPacks, type PackProblem } from './packs.js'

export interface PlanningResult {
  plans: Partial<Record<Mode, TrainingPlan>>
  /** Modes for which nothing fits: the error says why and what to change. */
  failures: Partial<Record<Mode, RigfitError>>
  /** Packs that failed to load: reported, skipped. */
  packProblems: PackProblem[]
}

export interface PlanModesOptions extends SearchPlanOptions {
  rulesDir?: string | undefined
  /** Read this machine's calibration store (unless `calibration` already holds the records). */
  useCalibration?: boolean
}

/**
 * Runs the rule packs and the generator for each mode; a mode that cannot fit is reported, not fatal. Every
 * plan carries what the user must know about how it was made: the packs that were skipped (file, rule id, JSON
 * path), a CPU that was assumed rather than known, and its cost when a price is known.
 */
export async function planModes(
  command: Command,
  profile: HardwareProfile,
  workload: Workload,
  modes: readonly Mode[],
  given: PlanModesOptions,
): Promise<PlanningResult> {
  const { packs, problems } = await loadAllPacks(command, { rulesDir: given.rulesDir })
  const result: PlanningResult = { plans: {}, failures: {}, packProblems: problems }
  const notices = planNotices(profile, problems)
  const options = await withCalibration(command, given)
  for (const mode of modes) {
    try {
      result.plans[mode] = await planMode({ packs, profile, workload, mode, options, notices })
    } catch (error) {
      if (!isRigfitError(error) || error.kind !== 'fit') throw error
      result.failures[mode] = error
    }
  }
  return result
}

/** The options with this machine's calibration records, when they ask for them and do not hold them yet. */
export async function withCalibration(command: Command, given: PlanModesOptions): Promise<PlanModesOptions> {
  return given.useCalibration && given.calibration === undefined
    ? { ...given, calibration: await loadCalibration(command) }
    : given
}

/** Warnings every plan of this profile and these packs carries. */
export function planNotices(profile: HardwareProfile, problems: PackProblem[]): Advice[] {
  return [...packNotices(problems), ...assumptionNotices(profile)]
}

/** One warning per rule pack that was skipped: file, rule id and JSON path. */
export function packNotices(problems: PackProblem[]): Advice[] {
  return problems.map((problem) => ({
    id: 'rule-pack-skipped',
    message: `Rule pack skipped: ${formatProblem(problem)}`,
    source: problem.file,
    expectedGain: null,
  }))
}
