import type { Command } from '@oclif/core'
import {
  type FitAlternative,
  type FitSearch,
  fitAlternatives,
  type HardwareProfile,
  type Mode,
  type RecommendationResult,
  recommendBudgetHours,
  recommendHardware,
  type Workload,
} from '@rigfit/core'
import { whatIfHardware } from '@rigfit/profiler'
import { loadAllCatalogEntries } from './catalog.js'
import { loadAllPacks } from './packs.js'
import { type PlanModesOptions, packNotices, withCalibration } from './planning.js'

/** What core's hardware search plans on: the installed plugins' catalogs and every pack in force. */
export async function hardwareSearch(command: Command, rulesDir: string | undefined): Promise<FitSearch> {
  const catalog = await loadAllCatalogEntries(command)
  const { packs, problems } = await loadAllPacks(command, { rulesDir })
  return { catalog, packs, hardware: whatIfHardware(catalog), packNotices: packNotices(problems) }
}

/** `--recommend`: every catalog GPU and cloud preset ranked for the workload (core's `recommendHardware`). */
export async function recommendFor(
  command: Command,
  workload: Workload,
  mode: Mode,
  options: PlanModesOptions,
  pricePerHour: number | null,
): Promise<RecommendationResult> {
  // A missing --time-budget is the first thing to say, before any catalog or pack is read.
  recommendBudgetHours(workload)
  return recommendHardware(
    await hardwareSearch(command, options.rulesDir),
    workload,
    mode,
    options,
    pricePerHour,
  )
}

/** The smallest changes that make a plan fit, each planned as the changed command would plan it. */
export async function fitAlternativesFor(
  command: Command,
  profile: HardwareProfile,
  workload: Workload,
  mode: Mode,
  options: PlanModesOptions,
): Promise<FitAlternative[]> {
  const search = await hardwareSearch(command, options.rulesDir)
  return fitAlternatives(search, profile, workload, mode, await withCalibration(command, options))
}
