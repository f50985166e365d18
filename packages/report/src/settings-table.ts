import type { TraceEntry, TrainingPlan } from '@rigfit/core'
import { escapeHtml, raw, renderTable, slug } from './html.js'

interface Labelled {
  label: string
  plan: TrainingPlan
}

const valueText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value))

/** The anchor of a setting's explanation in a plan. */
export const explainId = (label: string, setting: string): string => slug('why', label, setting)

function explanation(label: string, setting: string, entries: TraceEntry[]): string {
  const items = entries.map((entry) => {
    const facts = Object.entries(entry.facts).map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    return [
      `<dt>decided by</dt><dd><code>${escapeHtml(`${entry.pack}/${entry.rule}`)}</code> (${escapeHtml(entry.layer)} layer)</dd>`,
      `<dt>because</dt><dd>${escapeHtml(entry.reason)}</dd>`,
      facts.length > 0 ? `<dt>facts read</dt><dd><code>${escapeHtml(facts.join(', '))}</code></dd>` : '',
    ].join('')
  })
  const value = valueText(entries.at(-1)?.value)
  return `<div class="explain" id="${explainId(label, setting)}"><strong>${escapeHtml(`${label}: ${setting} = ${value}`)}</strong><dl>${items.join('')}</dl></div>`
}

/**
 * Every traced setting of every plan, one column per plan; each value links to its explanation below the
 * table, which lists the trace entries of that setting in order (the last one set the value).
 */
export function settingsTable(plans: Labelled[]): string {
  const settings = [...new Set(plans.flatMap(({ plan }) => plan.trace.map((entry) => entry.setting)))]
  const byPlan = plans.map(({ label, plan }) => {
    const entries = new Map<string, TraceEntry[]>()
    for (const entry of plan.trace) entries.set(entry.setting, [...(entries.get(entry.setting) ?? []), entry])
    return { label, entries }
  })
  const table = renderTable(
    {
      caption: 'Settings of each plan',
      headers: ['setting', ...plans.map((p) => p.label)],
      rows: settings.map((setting) => [
        setting,
        ...byPlan.map(({ label, entries }) => {
          const last = entries.get(setting)?.at(-1)
          return last
            ? raw(`<a href="#${explainId(label, setting)}">${escapeHtml(valueText(last.value))}</a>`)
            : null
        }),
      ]),
    },
    ' class="settings"',
  )
  const explanations = byPlan.map(
    ({ label, entries }) =>
      `<details><summary>Why each setting of ${escapeHtml(label)}</summary>${[...entries]
        .map(([setting, list]) => explanation(label, setting, list))
        .join('\n')}</details>`,
  )
  return `<div class="scroll">${table}</div>\n${explanations.join('\n')}`
}
