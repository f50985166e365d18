import { describeHubOrigin, type TrainingPlan } from '@rigfit/core'
import { barChart } from './bar-chart.js'
import { type Chart, renderChart } from './chart.js'
import { escapeHtml, list, renderTable, section } from './html.js'
import { memoryChart } from './memory-chart.js'
import { settingsTable } from './settings-table.js'
import { gibCell, grouped, hoursText, usd } from './units.js'

/** A plan and the name it goes by in the page (its mode, or the mode and its file when several share one). */
export interface LabelledPlan {
  label: string
  plan: TrainingPlan
}

function summaryTable(plans: LabelledPlan[]): string {
  const row = (name: string, cell: (plan: TrainingPlan) => string | number | null) => [
    name,
    ...plans.map(({ plan }) => cell(plan)),
  ]
  return renderTable({
    caption: 'The plans side by side',
    headers: ['', ...plans.map((p) => p.label)],
    rows: [
      row('Hardware', (p) => p.hardware.summary),
      row('Workload', (p) => p.workload.description),
      row(
        'Model',
        (p) =>
          `${p.model.name} (${grouped(p.params.total)} parameters, ${grouped(p.params.trainable)} trained)`,
      ),
      // A model read from the Hub names the revision its numbers came from.
      ...(plans.some(({ plan }) => plan.model.hub)
        ? [row('Hub', (p) => describeHubOrigin(p.model) ?? '—')]
        : []),
      row(
        'Micro-batch × accumulation',
        (p) => `${p.settings.microBatch} × ${p.settings.gradAccum} = ${p.settings.effectiveBatch}`,
      ),
      row('Sequence', (p) => p.settings.seq),
      row('Precision', (p) => p.settings.precision),
      row(
        'Memory per device',
        (p) =>
          `${gibCell(p.memory.perDevice.total)} of ${gibCell(p.memory.capacityBytes)} (${grouped(p.memory.usedFraction * 100, 1)}%)`,
      ),
      row('Tokens/s', (p) => grouped(p.throughput.tokensPerSecond)),
      row('Tokens', (p) => grouped(p.tokens.budget)),
      row('Time', (p) => hoursText(p.time.totalHours)),
      row('Power', (p) => `${grouped(p.power.watts)} W`),
      row('Energy', (p) => `${grouped(p.power.energyKWh, 2)} kWh`),
      row('Cost', (p) => (p.cost ? usd(p.cost.total) : null)),
    ],
  })
}

function speedCharts(plans: LabelledPlan[]): Chart[] {
  const per = (
    key: string,
    title: string,
    axis: string,
    value: (p: TrainingPlan) => number,
    text: (v: number) => string,
  ) =>
    barChart({
      id: `plans-${key}`,
      title,
      axis,
      rows: plans.map(({ label, plan }) => ({ label, value: value(plan), text: text(value(plan)) })),
    })
  const charts = [
    per(
      'tokens',
      'Training speed',
      'tokens per second',
      (p) => p.throughput.tokensPerSecond,
      (v) => grouped(v),
    ),
    per('time', 'Time to train the token budget', 'time (h)', (p) => p.time.totalHours, hoursText),
    per(
      'energy',
      'Energy of the run',
      'energy (kWh)',
      (p) => p.power.energyKWh,
      (v) => `${grouped(v, 2)} kWh`,
    ),
  ]
  const priced = plans.filter(({ plan }) => plan.cost)
  if (priced.length > 0) {
    charts.push(
      barChart({
        id: 'plans-cost',
        title: 'Cost of the run',
        axis: 'cost (US dollars)',
        rows: priced.map(({ label, plan }) => ({
          label,
          value: plan.cost?.total ?? 0,
          text: usd(plan.cost?.total ?? 0),
        })),
      }),
    )
  }
  return charts
}

function advice(plans: LabelledPlan[]): string {
  const lines = plans.flatMap(({ label, plan }) => [
    ...plan.warnings.map((w) => `${label} — warning: ${w.message}`),
    ...plan.suggestions.map(
      (s) => `${label} — suggestion: ${s.message}${s.expectedGain ? ` (${s.expectedGain})` : ''}`,
    ),
  ])
  return lines.length === 0 ? '' : `<h3>Warnings and suggestions</h3>${list(lines)}`
}

export async function plansSection(plans: LabelledPlan[]): Promise<string> {
  const memory = memoryChart(
    'plans-memory',
    'Memory per device, by mode',
    plans.map(({ label, plan }) => ({
      label,
      memory: plan.memory.perDevice,
      capacityBytes: plan.memory.capacityBytes,
      budgetBytes: plan.memory.capacityBytes * plan.memory.budgetFraction,
    })),
  )
  const charts = await Promise.all([memory, ...speedCharts(plans)].map(renderChart))
  return section('plans', 'Plans', [
    `<div class="scroll">${summaryTable(plans)}</div>`,
    charts[0] as string,
    `<div class="grid">${charts.slice(1).join('\n')}</div>`,
    advice(plans),
    `<h3>Settings</h3><p class="note">${escapeHtml('Each value links to the rules, packs and facts that decided it, as `rigfit explain <setting>` prints them.')}</p>`,
    settingsTable(plans),
  ])
}
