import { isRigfitError, RigfitError } from '../errors.js'
import type { LoadedPack } from '../packs/loaded-pack.js'
import { datasetTokens } from '../plan/candidates.js'
import { CLOUD_PRESETS } from '../plan/cloud-presets.js'
import { generatePlan, type PlanOptions } from '../plan/generate.js'
import { tokenBudget } from '../plan/token-budget.js'
import { decide } from '../rules/decide.js'
import { deriveFacts } from '../rules/derive-facts.js'
import type { Mode } from '../schemas/common.js'
import type { GpuCatalogEntry, GpuListPrice } from '../schemas/gpu-catalog.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { TrainingPlan } from '../schemas/training-plan.js'
import type { Workload } from '../schemas/workload.js'
import { fmtCount, fmtHours } from '../units.js'
import type { WhatIfHardware } from './what-if-hardware.js'

/** What the hardware search plans on: the loaded GPU catalogs and rule packs, and the what-if profile builder. */
export interface HardwareSearch {
  catalog: readonly GpuCatalogEntry[]
  packs: readonly LoadedPack[]
  hardware: WhatIfHardware
}

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
  search: HardwareSearch,
  workload: Workload,
  mode: Mode,
  options: PlanOptions,
  pricePerHour: number | null,
): Promise<RecommendationResult> {
  const budgetHours = recommendBudgetHours(workload)
  const { catalog, packs, hardware } = search
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
          () => hardware.catalogGpus(entry, gpus),
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
        () => hardware.cloudPreset(preset),
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

/** The time budget hardware is ranked against; without one there is nothing to rank by: a usage error. */
export function recommendBudgetHours(workload: Workload): number {
  const budgetHours = workload.timeBudgetHours
  if (budgetHours === null) {
    throw new RigfitError('usage', 'E_RECOMMEND_NEEDS_BUDGET', '--recommend needs a --time-budget.', {
      suggestion:
        'Add --time-budget 24h (and --dataset-size for fine-tuning) to rank hardware by whether it finishes in time.',
    })
  }
  return budgetHours
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
  packs: readonly LoadedPack[],
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
