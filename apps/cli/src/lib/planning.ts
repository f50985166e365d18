import type { Command } from '@oclif/core'
import {
  type Advice,
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
import { assumedCpuCount, assumedGpuVariant, assumedRamGiB, gpuVariantMessage } from '@rigfit/profiler'
import { loadCalibration } from './calibration/calibration-flags.js'
import { planCost } from './instance.js'
import { formatProblem, loadAllPacks, type PackProblem } from './packs.js'

export interface PlanningResult {
  plans: Partial<Record<Mode, TrainingPlan>>
  /** Modes for which nothing fits: the error says why and what to change. */
  failures: Partial<Record<Mode, RigfitError>>
  /** Packs that failed to load: reported, skipped. */
  packProblems: PackProblem[]
}

export interface PlanModesOptions extends PlanOptions {
  rulesDir?: string | undefined
  /** Hourly price of one node, for each plan's `cost`; null: no cost. */
  pricePerHour?: number | null
  /** Warnings every plan carries beyond the profile's own: a cluster's differences and missing nodes. */
  notices?: Advice[]
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
  const options =
    given.useCalibration && given.calibration === undefined
      ? { ...given, calibration: await loadCalibration(command) }
      : given
  for (const mode of modes) {
    const decisions = await decide(packs, deriveFacts(profile, workload, mode))
    try {
      const plan = generatePlan({ profile, workload, mode, decisions, options })
      plan.warnings.unshift(...(options.notices ?? []), ...notices)
      plan.cost = planCost(plan, options.pricePerHour ?? null)
      result.plans[mode] = plan
    } catch (error) {
      if (!isRigfitError(error) || error.kind !== 'fit') throw error
      result.failures[mode] = error
    }
  }
  return result
}

/** Warnings every plan of this profile and these packs carries. */
export function planNotices(profile: HardwareProfile, problems: PackProblem[]): Advice[] {
  const notices: Advice[] = problems.map((problem) => ({
    id: 'rule-pack-skipped',
    message: `Rule pack skipped: ${formatProblem(problem)}`,
    source: problem.file,
    expectedGain: null,
  }))
  const variant = assumedGpuVariant(profile)
  if (variant !== null) {
    notices.push({
      id: 'assumed-gpu-variant',
      message: gpuVariantMessage(variant),
      source: 'profile',
      expectedGain: null,
    })
  }
  const ram = assumedRamGiB(profile)
  if (ram !== null) {
    notices.push({
      id: 'assumed-ram',
      message: `The planned node's RAM is assumed, not known: ${ram} GiB, which bounds offloaded states and the data cache. Pass --ram GiB (or --instance) with the real size.`,
      source: 'profile',
      expectedGain: null,
    })
  }
  const cpus = assumedCpuCount(profile)
  if (cpus !== null) {
    notices.push({
      id: 'assumed-cpus',
      message: `The planned node's CPU is assumed, not known: ${cpus} logical CPUs, which set the threads and dataloader workers of each GPU. Pass --cpus N (or --instance) with the real count.`,
      source: 'profile',
      expectedGain: null,
    })
  }
  return notices
}
