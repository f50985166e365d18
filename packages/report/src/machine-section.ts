import { z } from 'zod'
import { escapeHtml, list, renderFacts, section } from './html.js'

/** The machine as the CLI summarises it: a heading, labelled rows (CPU, Memory, GPU 0, Links, …), and the score. */
export const MachineSummary = z.object({
  heading: z.string(),
  rows: z.array(z.tuple([z.string(), z.string()])),
  score: z.object({ score: z.number(), label: z.string(), reasons: z.array(z.string()) }).nullable(),
})
export type MachineSummary = z.infer<typeof MachineSummary>

export function machineSection(machine: MachineSummary): string {
  const score = machine.score
  return section('machine', 'Machine', [
    `<p>${escapeHtml(machine.heading)}</p>`,
    `<div class="scroll">${renderFacts('Hardware profile', machine.rows)}</div>`,
    score
      ? `<h3>Performance score: <span data-score>${score.score.toFixed(1)}</span>/10 (${escapeHtml(score.label)})</h3>${list(score.reasons)}`
      : '',
  ])
}
