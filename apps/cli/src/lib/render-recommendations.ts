import { datasetTokens, type RecommendationResult, type Workload } from '@rigfit/core'
import { fmtCount, fmtHours, table } from './format.js'

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
