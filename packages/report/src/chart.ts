import { parse, View } from 'vega'
import { compile, type TopLevelSpec } from 'vega-lite'
import { escapeHtml, renderTable, type Table } from './html.js'

/**
 * A plot: a Vega-Lite spec compiled to Vega and rendered to SVG by vega's headless view (no canvas, no DOM),
 * with its numbers as a table for screen readers and copy-paste.
 */
export interface Chart {
  /** Unique in the page: the figure's id. */
  id: string
  /** Its title, drawn in the plot and read as the figure's name. */
  title: string
  /** What the plot shows and where its numbers come from. */
  note?: string
  spec: TopLevelSpec
  table: Table
}

/**
 * Colours follow the page's text colour (`currentColor`), so one SVG reads in the light and the dark theme and
 * prints in black; the background stays transparent.
 */
const THEME = {
  background: 'transparent',
  font: 'system-ui, -apple-system, "Segoe UI", sans-serif',
  view: { stroke: null },
  axis: {
    labelColor: 'currentColor',
    titleColor: 'currentColor',
    domainColor: 'currentColor',
    tickColor: 'currentColor',
    gridColor: '#8b949e',
    gridOpacity: 0.35,
    labelFontSize: 11,
    titleFontSize: 12,
  },
  legend: {
    labelColor: 'currentColor',
    titleColor: 'currentColor',
    labelFontSize: 11,
    titleFontSize: 12,
    labelLimit: 260,
  },
  title: { color: 'currentColor', subtitleColor: 'currentColor', anchor: 'start', fontSize: 14 },
  text: { color: 'currentColor' },
  range: { category: { scheme: 'tableau10' } },
} as const

export async function chartSvg(chart: Chart): Promise<string> {
  const spec = {
    ...chart.spec,
    title: chart.title,
    description: chart.note ?? chart.title,
    config: { ...THEME, ...(chart.spec.config ?? {}) },
  } as TopLevelSpec
  const view = new View(parse(compile(spec).spec), { renderer: 'none' })
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}

/** The figure: the plot, a short note, and its numbers in a <details> table. */
export async function renderChart(chart: Chart): Promise<string> {
  const svg = (await chartSvg(chart)).replace(
    /^<svg /,
    `<svg role="img" aria-labelledby="${chart.id}-title" `,
  )
  return [
    `<figure class="chart" id="${chart.id}" data-chart="${chart.id}">`,
    `<span id="${chart.id}-title" hidden>${escapeHtml(chart.title)}</span>`,
    svg,
    '<figcaption>',
    chart.note ? `<p>${escapeHtml(chart.note)}</p>` : '',
    `<details><summary>The numbers of “${escapeHtml(chart.title)}”</summary><div class="scroll">`,
    renderTable(chart.table),
    '</div></details>',
    '</figcaption>',
    '</figure>',
  ].join('\n')
}
