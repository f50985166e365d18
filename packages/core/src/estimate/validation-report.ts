import type { ValidationMetric } from '../schemas/index.js'
import { isMemoryMetric, type ValidationOutcome } from './validation.js'
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

/** rigfit's own calibration harness is reported apart from the published runs. */
export const isHarnessOutcome = (o: ValidationOutcome): boolean => o.row.origin === 'calibrate'

function summaryTable(title: string, outcomes: readonly ValidationOutcome[]): string[] {
  const lines = [
    `**${title}**`,
    '',
    '| metric | rows | median abs error | within 15% | worst abs error (row) |',
    '| --- | ---: | ---: | ---: | --- |',
  ]
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
  return lines
}

const medianOf = (outcomes: readonly ValidationOutcome[], speed: boolean) => {
  const errors = outcomes
    .filter((o) => o.metric !== 'oom' && o.metric !== 'fits' && (o.metric === 'tokens_per_second') === speed)
    .map((o) => Math.abs(o.error))
  return errors.length ? abs(median(errors)) : '–'
}

const within15Of = (outcomes: readonly ValidationOutcome[]) => {
  const errors = outcomes.filter((o) => isMemoryMetric(o.metric)).map((o) => Math.abs(o.error))
  return errors.length
    ? `${((errors.filter((e) => e <= 0.15).length / errors.length) * 100).toFixed(0)}%`
    : '–'
}

/** One line per stack: the rows `rigfit estimate --stack NAME@VERSION` scores, as typed and held out. */
function stackTable(inSample: readonly ValidationOutcome[], heldOut: readonly ValidationOutcome[]): string[] {
  const lines = [
    '| stack | rows | memory median (as typed) | memory within 15% (as typed) | memory median (held out) | tokens/s median (as typed) | tokens/s median (held out) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  const stacks = [...new Set(inSample.map((o) => o.row.stack))].sort()
  for (const stack of stacks) {
    const own = inSample.filter((o) => o.row.stack === stack)
    const held = heldOut.filter((o) => o.row.stack === stack)
    lines.push(
      `| ${stack} | ${own.length} | ${medianOf(own, false)} | ${within15Of(own)} | ${medianOf(held, false)} | ${medianOf(own, true)} | ${medianOf(held, true)} |`,
    )
  }
  return [...lines, '']
}

/**
 * Markdown: every row scored as typed (the row's settings and `--stack` alone, shipped constants) and held out by
 * source, the published runs and rigfit's own harness apart; the per-stack and per-source tables and every row.
 */
export function renderValidationReport(
  inSample: readonly ValidationOutcome[],
  folds: readonly HeldOutFold[],
) {
  const heldOut = folds.flatMap((f) => f.outcomes)
  const published = (o: ValidationOutcome) => !isHarnessOutcome(o)
  const lines: string[] = [
    ...summaryTable('as typed, published runs', inSample.filter(published)),
    ...summaryTable("as typed, rigfit's calibration harness", inSample.filter(isHarnessOutcome)),
    ...summaryTable('held out by source, published runs', heldOut.filter(published)),
    ...summaryTable("held out by source, rigfit's calibration harness", heldOut.filter(isHarnessOutcome)),
    ...stackTable(inSample, heldOut),
  ]
  lines.push(
    '| source | stack | rows | memory median (as typed) | memory median (held out) | tokens/s median (as typed) | tokens/s median (held out) | constants fitted without it |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |',
  )
  for (const fold of folds) {
    const own = inSample.filter((o) => o.source === fold.source)
    lines.push(
      `| ${fold.source} | ${[...new Set(own.map((o) => o.row.stack))].join(', ')} | ${own.length} | ${medianOf(own, false)} | ${medianOf(fold.outcomes, false)} | ${medianOf(own, true)} | ${medianOf(fold.outcomes, true)} | matmul ${fold.tuning.matmulEfficiency.toFixed(2)}, attention ${fold.tuning.attentionEfficiency.toFixed(1)}, fragmentation ${fold.tuning.allocatorFragmentation.toFixed(2)} |`,
    )
  }
  const held = new Map(heldOut.map((o) => [o.id, o]))
  lines.push(
    '',
    '| row | stack | GPU | metric | measured | rigfit | error (as typed) | held out |',
    '| --- | --- | --- | --- | ---: | ---: | ---: | ---: |',
  )
  for (const o of inSample) {
    const h = held.get(o.id)
    const outcome = o.verdict !== null
    lines.push(
      `| ${o.id} | ${o.row.stack} | ${o.row.gpu.name} | ${o.metric} | ${formatValue(o.metric, o.measured)} | ${formatValue(o.metric, o.predicted)} | ${outcome ? o.verdict : pct(o.error)} | ${h ? (outcome ? h.verdict : pct(h.error)) : '–'} |`,
    )
  }
  return lines.join('\n')
}
