import type { Command } from '@oclif/core'
import {
  decide,
  deriveFacts,
  generatePlan,
  type HardwareProfile,
  isRigfitError,
  type Mode,
  type PlanOptions,
  type RigfitError,
  type TrainingPlan,
  type Workload,
} from '@rigfit/core'
import { loadAllPacks, type PackProblem } from './packs.js'

export interface PlanningResult {
  plans: Partial<Record<Mode, TrainingPlan>>
  /** Modes for which nothing fits: the error says why and what to change. */
  failures: Partial<Record<Mode, RigfitError>>
  /** Packs that failed to load: reported, skipped. */
  packProblems: PackProblem[]
}

/** Runs the rule packs and the generator for each mode; a mode that cannot fit is reported, not fatal. */
export async function planModes(
  command: Command,
  profile: HardwareProfile,
  workload: Workload,
  modes: readonly Mode[],
  options: PlanOptions & { rulesDir?: string | undefined },
): Promise<PlanningResult> {
  const { packs, problems } = await loadAllPacks(command, { rulesDir: options.rulesDir })
  const result: PlanningResult = { plans: {}, failures: {}, packProblems: problems }
  for (const mode of modes) {
    const decisions = await decide(packs, deriveFacts(profile, workload, mode))
    try {
      result.plans[mode] = generatePlan({ profile, workload, mode, decisions, options })
    } catch (error) {
      if (!isRigfitError(error) || error.kind !== 'fit') throw error
      result.failures[mode] = error
    }
  }
  return result
}
