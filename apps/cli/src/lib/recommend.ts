import type { Command } from '@oclif/core'
import {
  CLOUD_PRESETS,
  datasetTokens,
  decide,
  deriveFacts,
  type GpuListPrice,
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
  /** Where `pricePerHour` comes from: the GPU catalog's list price (provider, offer, page, day seen), the preset's, or --price-per-hour. */
  priceSource: string | null
  /** Price x `hours`: the cost of training every requested token. */
  cost: number | null
  reason: string | null
}

export interface RecommendationResult {
  budgetHours: number
  mode: Mode
  /** Hardware that trains every requested token within the budget, in the order `rankedBy` says. */
  ranked: Recommendation[]
  /**
   * `cost`: without --price-per-hour, the priced entries cheapest first (cost of the run at list price), then those
   * without a list price, fastest first; `time`: with --price-per-hour, fastest first, then cheapest.
   */
  rankedBy: 'cost' | 'time'
  /** Catalog GPUs among `ranked` that have no sourced list price (ranked after the priced ones when by cost). */
  unpriced: string[]
  /** The rest: no plan fits, or it would need longer than the budget (`hours` says how long). */
  rejected: Recommendation[]
}

const GPU_COUNTS = [1, 2, 4, 8] as const

/**
 * Reverse planning: plans the workload on every catalog GPU (1, 2, 4 and 8 of them) and every cloud preset, and
 * ranks those that train every requested token within the time budget (`rankWithinBudget`). Apple and CPU entries
 * are left out of multi-GPU counts: they come one per machine. `pricePerHour` is per GPU for catalog GPUs, else
 * each GPU's sourced list price from the catalog; presets use their list price. Without a time budget there is
 * nothing to rank by: a usage error.
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
    priceSource: string | null,
  ) => rank(packs, workload, mode, options, budgetHours, { profile, label, kind, gpus, price, priceSource })
  const unpriced = new Set<string>()
  for (const entry of catalog) {
    const perGpu = pricePerHour ?? entry.listPrice?.usdPerGpuHour ?? null
    const source =
      pricePerHour !== null ? '--price-per-hour' : entry.listPrice ? describeListPrice(entry.listPrice) : null
    for (const gpus of GPU_COUNTS) {
      if (gpus > 1 && entry.unifiedMemory) continue
      const label = `${gpus > 1 ? `${gpus}x ` : ''}${entry.name}`
      if (perGpu === null) unpriced.add(label)
      results.push(
        await attempt(
          () => whatIfProfile({ gpu: entry, gpus }, catalog),
          label,
          'gpu',
          gpus,
          perGpu === null ? null : perGpu * gpus,
          source,
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
        `${preset.provider} on-demand list price of ${preset.id} (cloud preset)`,
      ),
    )
  }
  const rankedBy = pricePerHour === null ? 'cost' : 'time'
  const ranked = rankWithinBudget(results, rankedBy)
  const rejected = results.filter((result) => !result.fits || !result.withinBudget)
  return {
    budgetHours: workload.timeBudgetHours ?? 0,
    mode,
    ranked,
    rankedBy,
    unpriced: ranked.filter((r) => unpriced.has(r.hardware)).map((r) => r.hardware),
    rejected,
  }
}

/**
 * The entries that train every requested token within the budget, best first. By `cost` (no price given): the
 * cheapest run at list price first, so the cheapest hardware class that meets the budget leads; entries without
 * a list price follow, fastest first, since nothing says what they cost. By `time` (one price for every GPU):
 * fastest first, then the larger token count, then the cheaper.
 */
export function rankWithinBudget(results: Recommendation[], by: 'cost' | 'time'): Recommendation[] {
  const inf = Number.POSITIVE_INFINITY
  const byTime = (a: Recommendation, b: Recommendation) =>
    a.hours - b.hours || b.tokens - a.tokens || (a.cost ?? inf) - (b.cost ?? inf)
  const byCost = (a: Recommendation, b: Recommendation) =>
    Number(a.cost === null) - Number(b.cost === null) || (a.cost ?? 0) - (b.cost ?? 0) || byTime(a, b)
  return results.filter((r) => r.fits && r.withinBudget).sort(by === 'cost' ? byCost : byTime)
}

/** "Lambda 1x NVIDIA H100 SXM on-demand instance, https://lambda.ai/instances (seen 2026-09-20)". */
function describeListPrice(price: GpuListPrice): string {
  return `${price.provider} ${price.offer}, ${price.source} (seen ${price.seen}${price.via ? `, read via ${price.via}` : ''})`
}

interface Candidate {
  profile: () => HardwareProfile
  label: string
  kind: Recommendation['kind']
  gpus: number
  price: number | null
  priceSource: string | null
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
    priceSource: candidate.priceSource,
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
    `Hardware that can ${what}${all} within ${fmtHours(ranking.budgetHours)} (${ranking.mode} mode), ${ranking.rankedBy === 'cost' ? 'cheapest first at list price' : 'fastest first'}:`,
    '',
  ]
  if (ranking.ranked.length === 0) {
    lines.push(
      '  none: no catalog GPU or cloud preset trains all of it within the budget. Raise --time-budget or shrink the work.',
    )
  } else {
    lines.push(
      table([
        ['#', 'Hardware', 'Method', 'Tokens/s', 'Tokens', 'Time', 'Price', 'Cost'],
        ...ranking.ranked
          .slice(0, 25)
          .map((r, i) => [
            String(i + 1),
            r.hardware,
            r.method,
            fmtCount(r.tokensPerSecond),
            fmtCount(r.tokens),
            fmtHours(r.hours),
            r.pricePerHour === null ? '-' : `$${r.pricePerHour.toFixed(2)}/h`,
            r.cost === null ? '-' : `$${r.cost.toFixed(2)}`,
          ]),
      ]),
    )
    if (ranking.ranked.length > 25)
      lines.push(`  ... and ${ranking.ranked.length - 25} more (--json lists all)`)
  }
  lines.push('', ...rankingNote(ranking))
  const noFit = ranking.rejected.filter((r) => !r.fits).length
  const tooSlow = ranking.rejected.length - noFit
  lines.push(
    '',
    `${ranking.ranked.length} configurations train all of it within the budget; ${tooSlow} fit but would need longer than the budget (they train only part of it in time); ${noFit} do not fit the model.`,
  )
  return lines.join('\n')
}

/** How the list was ordered, and which entries had no price to order them by. */
function rankingNote(ranking: RecommendationResult): string[] {
  if (ranking.rankedBy === 'time')
    return [
      'Ranked by the time to train all of it; Price is --price-per-hour per GPU (presets: their list price).',
    ]
  const note = [
    "Ranked by the cost of the run at list price: each GPU's on-demand price per GPU-hour from the GPU catalog (provider, page and day seen: priceSource in --json) x GPUs x time; cloud presets at their instance price.",
  ]
  if (ranking.unpriced.length > 0)
    note.push(
      `No list price in the catalog for ${ranking.unpriced.length} of them, ranked after the priced ones, fastest first: ${ranking.unpriced.slice(0, 12).join(', ')}${ranking.unpriced.length > 12 ? ` and ${ranking.unpriced.length - 12} more (unpriced in --json)` : ''}. Pass --price-per-hour to rank every GPU at one price by time.`,
    )
  return note
}
