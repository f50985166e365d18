import { datasetTokens, type RecommendationResult, type Workload } from '@rigfit/core'
import { fmtCount, fmtHours, table } from './format.js'

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
