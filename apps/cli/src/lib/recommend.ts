import type { Command } from '@oclif/core'
import {
  CLOUD_PRESETS,
  decide,
  deriveFacts,
  type GpuCatalogEntry,
  generatePlan,
  isRigfitError,
  type LoadedPack,
  type Mode,
  type PlanOptions,
  type TrainingPlan,
  type Workload,
} from '@rigfit/core'
import { whatIfProfile } from '@rigfit/profiler'
import { loadAllCatalogEntries } from './catalog.js'
import { fmtCount, fmtHours, table } from './format.js'
import { loadAllPacks } from './packs.js'

export interface Recommendation {
  hardware: string
  kind: 'gpu' | 'cloud'
  gpus: number
  fits: boolean
  withinBudget: boolean
  hours: number
  tokensPerSecond: number
  tokens: number
  method: string
  pricePerHour: number | null
  cost: number | null
  reason: string | null
}

const GPU_COUNTS = [1, 2, 4, 8] as const

/**
 * Reverse planning: plans the workload on every catalog GPU (1, 2, 4 and 8 of them) and every cloud preset,
 * and ranks those that finish within the time budget by time, then cost. Apple and CPU entries are left out of
 * multi-GPU counts: they come one per machine.
 */
export async function recommendHardware(
  command: Command,
  workload: Workload,
  mode: Mode,
  options: PlanOptions & { rulesDir?: string },
  pricePerHour: number | null,
): Promise<{ budgetHours: number; mode: Mode; ranked: Recommendation[]; rejected: Recommendation[] }> {
  const catalog = await loadAllCatalogEntries(command)
  const { packs } = await loadAllPacks(command, { rulesDir: options.rulesDir })
  const results: Recommendation[] = []
  for (const entry of catalog) {
    for (const gpus of GPU_COUNTS) {
      if (gpus > 1 && entry.unifiedMemory) continue
      const label = `${gpus > 1 ? `${gpus}x ` : ''}${entry.name}`
      results.push(
        await tryPlan(
          packs,
          catalog,
          workload,
          mode,
          options,
          { gpu: entry, gpus },
          label,
          'gpu',
          pricePerHour === null ? null : pricePerHour * gpus,
        ),
      )
    }
  }
  for (const preset of CLOUD_PRESETS) {
    results.push(
      await tryPlan(
        packs,
        catalog,
        workload,
        mode,
        options,
        { gpu: preset.gpu, gpus: preset.gpus, ramGiB: preset.ramGiB },
        `${preset.id} (${preset.provider}, ${preset.gpus}x ${preset.gpu})`,
        'cloud',
        preset.pricePerHour,
      ),
    )
  }
  const ranked = results
    .filter((result) => result.fits && result.withinBudget)
    .sort(
      (a, b) =>
        a.hours - b.hours || (a.cost ?? Number.POSITIVE_INFINITY) - (b.cost ?? Number.POSITIVE_INFINITY),
    )
  const rejected = results.filter((result) => !result.fits || !result.withinBudget)
  return { budgetHours: workload.timeBudgetHours ?? 0, mode, ranked, rejected }
}

async function tryPlan(
  packs: LoadedPack[],
  catalog: GpuCatalogEntry[],
  workload: Workload,
  mode: Mode,
  options: PlanOptions,
  hardware: { gpu: GpuCatalogEntry | string; gpus: number; ramGiB?: number },
  label: string,
  kind: Recommendation['kind'],
  price: number | null,
): Promise<Recommendation> {
  const base = { hardware: label, kind, gpus: hardware.gpus, pricePerHour: price }
  try {
    const profile = whatIfProfile(hardware, catalog)
    // No time cap while ranking: the plan reports how long the work takes, and the budget decides.
    const uncapped: Workload = {
      ...workload,
      timeBudgetHours:
        workload.kind === 'finetune' && workload.datasetBytes === null ? workload.timeBudgetHours : null,
    }
    const decisions = await decide(packs, deriveFacts(profile, uncapped, mode))
    const plan: TrainingPlan = generatePlan({ profile, workload: uncapped, mode, decisions, options })
    const hours = plan.time.totalHours
    return {
      ...base,
      fits: true,
      withinBudget: hours <= (workload.timeBudgetHours ?? Number.POSITIVE_INFINITY),
      hours,
      tokensPerSecond: plan.throughput.tokensPerSecond,
      tokens: plan.tokens.budget,
      method: plan.settings.method,
      cost: price === null ? null : price * hours,
      reason: null,
    }
  } catch (error) {
    if (!isRigfitError(error)) throw error
    return {
      ...base,
      fits: false,
      withinBudget: false,
      hours: Number.POSITIVE_INFINITY,
      tokensPerSecond: 0,
      tokens: 0,
      method: '-',
      cost: null,
      reason: error.message,
    }
  }
}

export function renderRecommendations(
  ranking: Awaited<ReturnType<typeof recommendHardware>>,
  workload: Workload,
): string {
  const what = workload.model ? `fine-tune ${workload.model.name}` : 'pretrain from scratch'
  const lines = [
    `Hardware that can ${what} within ${fmtHours(ranking.budgetHours)} (${ranking.mode} mode), fastest first:`,
    '',
  ]
  if (ranking.ranked.length === 0) {
    lines.push(
      '  none: no catalog GPU or cloud preset finishes within the budget. Raise --time-budget or shrink the work.',
    )
  } else {
    lines.push(
      table([
        ['#', 'Hardware', 'Method', 'Tokens/s', 'Time', 'Cost'],
        ...ranking.ranked
          .slice(0, 25)
          .map((r, i) => [
            String(i + 1),
            r.hardware,
            r.method,
            fmtCount(r.tokensPerSecond),
            fmtHours(r.hours),
            r.cost === null ? '-' : `$${r.cost.toFixed(2)}`,
          ]),
      ]),
    )
    if (ranking.ranked.length > 25)
      lines.push(`  ... and ${ranking.ranked.length - 25} more (--json lists all)`)
  }
  const noFit = ranking.rejected.filter((r) => !r.fits).length
  const tooSlow = ranking.rejected.length - noFit
  lines.push(
    '',
    `${noFit} configurations do not fit the model; ${tooSlow} fit but take longer than the budget.`,
  )
  return lines.join('\n')
}
