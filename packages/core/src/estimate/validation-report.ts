import type { ValidationMetric } from '../schemas/index.js'
import type { ValidationOutcome } from './validation.js'
import type { HeldOutFold } from './validation-fit.js'
import { type MetricSummary, median, summarizeOutcomes, summarizeValidation } from './validation-summary.js'

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`
const abs = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : `${(x * 100).toFixed(1)}%`)

function formatValue(metric: ValidationMetric, value: number): string {
  return metric === 'tokens_per_second'
    ? `${Math.round(value).toLocaleString('en-US')} tok/s`
    : `${(value / 2 ** 30).toFixed(2)} GiB`
}

function summaryLine(name: string, s: MetricSummary | undefined): string {
  if (!s) return `| ${name} | 0 | – | – | – |`
  return `| ${name} | ${s.count} | ${abs(s.medianAbsError)} | ${(s.within15 * 100).toFixed(0)}% | ${abs(s.worstAbsError)} (${s.worstId}) |`
}

/** Markdown: in-sample and held-out summaries per metric, the verdicts, the per-source table and every row. */
export function renderValidationReport(
  inSample: readonly ValidationOutcome[],
  folds: readonly HeldOutFold[],
) {
  const heldOut = folds.flatMap((f) => f.outcomes)
  const lines: string[] = []
  for (const [title, outcomes] of [
    ['in-sample (shipped constants)', inSample],
    ['leave-one-source-out', heldOut],
  ] as const) {
    lines.push(
      `**${title}**`,
      '',
      '| metric | rows | median abs error | within 15% | worst abs error (row) |',
      '| --- | ---: | ---: | ---: | --- |',
    )
    const summary = summarizeValidation(outcomes)
    for (const metric of [
      'memory',
      'max_memory_allocated',
      'max_memory_reserved',
      'nvidia-smi',
      'tokens_per_second',
    ] as const) {
      const s = summary.find((x) => x.metric === metric)
      if (s) lines.push(summaryLine(metric === 'memory' ? 'all memory metrics' : metric, s))
    }
    const verdicts = summarizeOutcomes(outcomes)
    lines.push(
      '',
      `Measured out-of-memory runs called \`fits\`: ${verdicts.oomPredictedFits.length} of ${verdicts.oom}${verdicts.oomPredictedFits.length ? ` (${verdicts.oomPredictedFits.join(', ')})` : ''}; measured fitting runs called \`does-not-fit\`: ${verdicts.fitsPredictedNotFit.length} of ${verdicts.fits}.`,
      '',
    )
  }
  lines.push(
    '| source | rows | memory median (in-sample) | memory median (held out) | tokens/s median (in-sample) | tokens/s median (held out) | constants fitted without it |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
  )
  for (const fold of folds) {
    const own = inSample.filter((o) => o.source === fold.source)
    const med = (outcomes: readonly ValidationOutcome[], speed: boolean) => {
      const errors = outcomes
        .filter(
          (o) => o.metric !== 'oom' && o.metric !== 'fits' && (o.metric === 'tokens_per_second') === speed,
        )
        .map((o) => Math.abs(o.error))
      return errors.length ? abs(median(errors)) : '–'
    }
    lines.push(
      `| ${fold.source} | ${own.length} | ${med(own, false)} | ${med(fold.outcomes, false)} | ${med(own, true)} | ${med(fold.outcomes, true)} | matmul ${fold.tuning.matmulEfficiency.toFixed(2)}, attention ${fold.tuning.attentionEfficiency.toFixed(1)}, fragmentation ${fold.tuning.allocatorFragmentation.toFixed(2)} |`,
    )
  }
  const held = new Map(heldOut.map((o) => [o.id, o]))
  lines.push(
    '',
    '| row | GPU | metric | measured | rigfit | error | held out |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: |',
  )
  for (const o of inSample) {
    const h = held.get(o.id)
    const outcome = o.verdict !== null
    lines.push(
      `| ${o.id} | ${o.row.gpu.name} | ${o.metric} | ${formatValue(o.metric, o.measured)} | ${formatValue(o.metric, o.predicted)} | ${outcome ? o.verdict : pct(o.error)} | ${h ? (outcome ? h.verdict : pct(h.error)) : '–'} |`,
    )
  }
  return lines.join('\n')
}
