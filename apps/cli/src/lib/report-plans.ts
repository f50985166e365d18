import { basename } from 'node:path'
import {
  type HardwareProfile,
  type Mode,
  performanceScore,
  type RecommendationResult,
  RigfitError,
  type TrainingPlan,
  type Workload,
} from '@rigfit/core'
import { readPlanFile } from '@rigfit/exporters'
import { formatProfileSummary } from '@rigfit/profiler'
import type { LabelledPlan, MachineSummary, WhatIf } from '@rigfit/report'
import type { RigfitCommand } from './base-command.js'
import { fmtHours } from './format.js'
import { type PlanModesOptions, planModes } from './planning.js'

/** How many ranked configurations the what-if chart shows, as `rigfit plan --recommend` prints them. */
const RANKED_SHOWN = 25

/** Plans read from files, named by mode (and file, when two share a mode). */
export async function readPlans(files: string[]): Promise<LabelledPlan[]> {
  const plans: TrainingPlan[] = []
  for (const file of files) plans.push(await readPlanFile(file))
  return plans.map((plan, i) => ({
    label:
      plans.filter((other) => other.mode === plan.mode).length > 1
        ? `${plan.mode} (${basename(files[i] as string)})`
        : plan.mode,
    plan,
  }))
}

/** Plans made here for the profile, one per mode; a mode where nothing fits is an error naming it. */
export async function makePlans(
  command: RigfitCommand,
  profile: HardwareProfile,
  workload: Workload,
  modes: readonly Mode[],
  options: PlanModesOptions,
): Promise<LabelledPlan[]> {
  const { plans, failures } = await planModes(command, profile, workload, modes, options)
  const failed = modes.find((mode) => failures[mode])
  if (failed) {
    const failure = failures[failed] as RigfitError
    throw new RigfitError(failure.kind, failure.code, `${failed}: ${failure.message}`, {
      ...(failure.suggestion ? { suggestion: failure.suggestion } : {}),
    })
  }
  return modes.map((mode) => ({ label: mode, plan: plans[mode] as TrainingPlan }))
}

/** The machine section: the profile summary rigfit prints, row by row, and the score with its reasons. */
export function machineSummary(profile: HardwareProfile): MachineSummary {
  const [heading = '', ...lines] = formatProfileSummary(profile).trimEnd().split('\n')
  // The summary's rows are a 9-character label and the text.
  const rows = lines.map((line): [string, string] => [line.slice(0, 9).trim(), line.slice(9).trim()])
  return { heading, rows, score: performanceScore(profile) }
}

/** The what-if of --compare: the first mode planned on each named GPU. */
export function comparedWhatIf(
  mode: Mode,
  results: { gpu: string; plan: TrainingPlan | null; reason: string | null }[],
): WhatIf {
  return {
    description: `The ${mode} plan of the same workload on each GPU given with --compare.`,
    candidates: results.map(({ gpu, plan, reason }) => ({
      label: plan
        ? `${plan.hardware.gpus > 1 ? `${plan.hardware.gpus} × ` : ''}${plan.hardware.gpuName ?? gpu}`
        : gpu,
      hours: plan ? plan.time.totalHours : null,
      cost: plan?.cost?.total ?? null,
      reason,
    })),
  }
}

/** The what-if of --recommend: the first configurations that finish within the budget, in its ranking's order. */
export function recommendedWhatIf(ranking: RecommendationResult): WhatIf {
  const shown = ranking.ranked.slice(0, RANKED_SHOWN)
  return {
    description: `The ${shown.length} ${ranking.rankedBy === 'cost' ? 'cheapest at list price' : 'fastest'} of ${ranking.ranked.length} configurations that train all of it within ${fmtHours(ranking.budgetHours)} (${ranking.mode} mode); ${ranking.rejected.length} others fit but are too slow, or do not fit.`,
    candidates: shown.map((r) => ({
      label: `${r.hardware} (${r.method})`,
      hours: r.hours,
      cost: r.cost,
      reason: null,
    })),
  }
}
