import { z } from 'zod'
import { barChart } from './bar-chart.js'
import { renderChart } from './chart.js'
import { escapeHtml, renderTable, section } from './html.js'
import { hoursText, usd } from './units.js'

/** One hardware candidate of a what-if: a GPU (and count) or a cloud instance, planned for the same workload. */
export const WhatIfCandidate = z.object({
  label: z.string(),
  /** Hours to train; null when nothing fits it. */
  hours: z.number().nonnegative().nullable(),
  /** Cost of those hours at a known price; null without one. */
  cost: z.number().nonnegative().nullable(),
  /** Why it is out (nothing fits, over the time budget); null when it is in. */
  reason: z.string().nullable(),
})
export type WhatIfCandidate = z.infer<typeof WhatIfCandidate>

export const WhatIf = z.object({
  /** What was compared: "balanced plans of the workload on each GPU", "--recommend for a 24 h budget". */
  description: z.string(),
  candidates: z.array(WhatIfCandidate),
})
export type WhatIf = z.infer<typeof WhatIf>

export async function whatIfSection(whatIf: WhatIf): Promise<string> {
  const timed = whatIf.candidates.filter((c) => c.hours !== null && Number.isFinite(c.hours))
  const priced = timed.filter((c) => c.cost !== null)
  const charts = [
    barChart({
      id: 'what-if-time',
      title: 'Time to train, by hardware',
      axis: 'time to train (h)',
      sorted: true,
      rows: timed.map((c) => ({
        label: c.label,
        value: c.hours as number,
        text: hoursText(c.hours as number),
      })),
    }),
  ]
  if (priced.length > 0) {
    charts.push(
      barChart({
        id: 'what-if-cost',
        title: 'Cost to train, by hardware',
        axis: 'cost (US dollars)',
        sorted: true,
        rows: priced.map((c) => ({ label: c.label, value: c.cost as number, text: usd(c.cost as number) })),
      }),
    )
  }
  const out = whatIf.candidates.filter((c) => c.reason !== null)
  return section('what-if', 'What-if', [
    `<p>${escapeHtml(whatIf.description)}</p>`,
    timed.length > 0
      ? `<div class="grid">${(await Promise.all(charts.map(renderChart))).join('\n')}</div>`
      : '',
    out.length > 0
      ? renderTable({
          caption: 'Left out',
          headers: ['hardware', 'why'],
          rows: out.map((c) => [c.label, c.reason]),
        })
      : '',
  ])
}
