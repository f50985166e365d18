import type { Command } from '@oclif/core'
import {
  CLOUD_PRESETS,
  datasetTokens,
  decide,
  deriveFacts,
  generatePlan,
  type HardwareProfile,
  isRigfitError,
  type LoadedPack,
  type Mode,
  type PlanOptions,
  RigfitError,
  type TrainingPlan,
  tokenBudget,
  type Workload,
} from '@rigfit/core'
import { presetProfile, whatIfProfile } from '@rigfit/profiler'
import { loadAllCatalogEntries } from './catalog.js'
import { fmtCount, fmtHours, table } from './format.js'
import { loadAllPacks } from './packs.js'

export interface Recommendation {
  hardware: string
  kind: 'gpu' | 'cloud'
  gpus: number
  /** A plan fits the hardware's memory. */
  fits: boolean
  /** Every requested token is trained within the time budget. */
  withinBudget: boolean
  /** Hours to train every requested token (for an open-ended fine-tune: the planned run); Infinity without a plan. */
  hours: number
  tokensPerSecond: number
  /** Tokens trained within the time budget: all requested ones when `withinBudget`, fewer otherwise. */
  tokens: number
  /**
   * What the workload asks to train: one epoch of the dataset for a fine-tune, the pretraining target of the planned
   * model (Chinchilla tokens, at most four epochs of the dataset); null for a fine-tune of unknown size.
   */
  requestedTokens: number | null
  method: string
  pricePerHour: number | null
  /** Price x `hours`: the cost of training every requested token. */
  cost: number | null
  reason: string | null
}

export interface RecommendationResult {
  budgetHours: number
  mode: Mode
  /** Hardware that trains every requested token within the budget, fastest first, then cheapest. */
  ranked: Recommendation[]
  /** The rest: no plan fits, or it would need longer than the budget (`hours` says how long). */
  rejected: Recommendation[]
}

const GPU_COUNTS = [1, 2, 4, 8] as const

/**
 * Reverse planning: plans the workload on every catalog GPU (1, 2, 4 and 8 of them) and every cloud preset,
 * and ranks those that train every requested token within the time budget by the time that takes, then cost.
 * Apple and CPU entries are left out of multi-GPU counts: they come one per machine. `pricePerHour` is per GPU
 * for catalog GPUs; presets use their list price. Without a time budget there is nothing to rank by: a usage error.
 */
export async function recommendHardware(
  command: Command,
  workload: Workload,
  mode: Mode,
  options: PlanOptions & { rulesDir?: string | undefined },
  pricePerHour: number | null,
): Promise<RecommendationResult> {
  const budgetHours = workload.timeBudgetHours
  if (budgetHours === null) {
    throw new RigfitError('usage', 'E_RECOMMEND_NEEDS_BUDGET', '--recommend needs a --time-budget.', {
      suggestion:
        'Add --time-budget 24h (and --dataset-size for fine-tuning) to rank hardware by whether it finishes in time.',
    })
  }
  const catalog = await loadAllCatalogEntries(command)
  const { packs } = await loadAllPacks(command, { rulesDir: options.rulesDir })
  const results: Recommendation[] = []
  const attempt = (
    profile: () => HardwareProfile,
    label: string,
    kind: Recommendation['kind'],
    gpus: number,
    price: number | null,
  ) => rank(packs, workload, mode, options, budgetHours, { profile, label, kind, gpus, price })
  for (const entry of catalog) {
    for (const gpus of GPU_COUNTS) {
      if (gpus > 1 && entry.unifiedMemory) continue
      results.push(
        await attempt(
          () => whatIfProfile({ gpu: entry, gpus }, catalog),
          `${gpus > 1 ? `${gpus}x ` : ''}${entry.name}`,
          'gpu',
          gpus,
          pricePerHour === null ? null : pricePerHour * gpus,
        ),
      )
    }
  }
  for (const preset of CLOUD_PRESETS) {
    results.push(
      await attempt(
        () => presetProfile(preset, catalog),
        `${preset.id} (${preset.provider}, ${preset.gpus}x ${preset.gpu})`,
        'cloud',
        preset.gpus,
        preset.pricePerHour,
      ),
    )
  }
  const ranked = results
    .filter((result) => result.fits && result.withinBudget)
    .sort(
      (a, b) =>
        a.hours - b.hours ||
        b.tokens - a.tokens ||
        (a.cost ?? Number.POSITIVE_INFINITY) - (b.cost ?? Number.POSITIVE_INFINITY),
    )
  const rejected = results.filter((result) => !result.fits || !result.withinBudget)
  return { budgetHours: workload.timeBudgetHours ?? 0, mode, ranked, rejected }
}

interface Candidate {
  profile: () => HardwareProfile
  label: string
  kind: Recommendation['kind']
  gpus: number
  price: number | null
}

async function rank(
  packs: LoadedPack[],
  workload: Workload,
  mode: Mode,
  options: PlanOptions,
  budgetHours: number,
  candidate: Candidate,
): Promise<Recommendation> {
  const base = {
    hardware: candidate.label,
    kind: candidate.kind,
    gpus: candidate.gpus,
    pricePerHour: candidate.price,
  }
  try {
    const profile = candidate.profile()
    // A workload with a size is planned without the time cap: the plan's speed decides how long all of it takes.
    // An open-ended fine-tune (no dataset size) has nothing else to bound it, so its plan keeps the budget.
    const openEnded = workload.kind === 'finetune' && datasetTokens(workload) === null
    const planned: Workload = { ...workload, timeBudgetHours: openEnded ? workload.timeBudgetHours : null }
    const decisions = await decide(packs, deriveFacts(profile, planned, mode))
    const plan = generatePlan({ profile, workload: planned, mode, decisions, options })
    const rate = plan.throughput.tokensPerSecond
    const requestedTokens = openEnded ? null : requested(workload, plan)
    const hours =
      requestedTokens === null
        ? plan.time.totalHours
        : rate > 0
          ? requestedTokens / rate / 3600
          : Number.POSITIVE_INFINITY
    const withinBudget = hours <= budgetHours
    const tokens =
      requestedTokens === null
        ? plan.tokens.budget
        : withinBudget
          ? requestedTokens
          : Math.floor(rate * budgetHours * 3600)
    return {
      ...base,
      fits: true,
      withinBudget,
      hours,
      tokensPerSecond: rate,
      tokens,
      requestedTokens,
      method: plan.settings.method,
      cost: candidate.price === null || !Number.isFinite(hours) ? null : candidate.price * hours,
      reason: withinBudget
        ? null
        : `needs ${fmtHours(hours)} to train ${fmtCount(requestedTokens ?? 0)} tokens; ${fmtHours(budgetHours)} trains ${fmtCount(tokens)}`,
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
      requestedTokens: null,
      method: '-',
      cost: null,
      reason: error.message,
    }
  }
}

/** The tokens the workload asks of this plan's model, with no time bound (core's token budget without one). */
function requested(workload: Workload, plan: TrainingPlan): number {
  return tokenBudget({
    params: plan.params.total,
    tokensPerParam: plan.params.total > 0 ? plan.tokens.chinchillaTokens / plan.params.total : 0,
    tokensPerSecond: plan.throughput.tokensPerSecond,
    maxHours: null,
    kind: workload.kind,
    datasetTokens: datasetTokens(workload),
    epochs: workload.epochs ?? null,
  }).budget
}

export function renderRecommendations(ranking: RecommendationResult, workload: Workload): string {
  const what = workload.model ? `fine-tune ${workload.model.name}` : 'pretrain from scratch'
  const all = workload.kind === 'finetune' && datasetTokens(workload) === null ? '' : ' on all its tokens'
  const lines = [
    `Hardware that can ${what}${all} within ${fmtHours(ranking.budgetHours)} (${ranking.mode} mode), fastest first:`,
    '',
  ]
  if (ranking.ranked.length === 0) {
    lines.push(
      '  none: no catalog GPU or cloud preset trains all of it within the budget. Raise --time-budget or shrink the work.',
    )
  } else {
    lines.push(
      table([
        ['#', 'Hardware', 'Method', 'Tokens/s', 'Tokens', 'Time', 'Cost'],
        ...ranking.ranked
          .slice(0, 25)
          .map((r, i) => [
            String(i + 1),
            r.hardware,
            r.method,
            fmtCount(r.tokensPerSecond),
            fmtCount(r.tokens),
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
    `${ranking.ranked.length} configurations train all of it within the budget; ${tooSlow} fit but would need longer than the budget (they train only part of it in time); ${noFit} do not fit the model.`,
  )
  return lines.join('\n')
}
