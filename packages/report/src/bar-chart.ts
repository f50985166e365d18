import type { Chart } from './chart.js'

export interface BarRow {
  label: string
  value: number
  /** The value as the table writes it (with its unit). */
  text: string
}

export interface BarChartOptions {
  id: string
  title: string
  note?: string
  /** The value axis' title, with its unit: "time to train (h)". */
  axis: string
  rows: BarRow[]
  /** Sort the bars by value, smallest first (a ranking); else keep the given order. */
  sorted?: boolean
}

/** One horizontal bar per row, labelled with its value. */
export function barChart(options: BarChartOptions): Chart {
  const rows = options.sorted ? [...options.rows].sort((a, b) => a.value - b.value) : options.rows
  const y = {
    field: 'label',
    type: 'nominal',
    title: null,
    sort: rows.map((row) => row.label),
    axis: { labelLimit: 260 },
  } as const
  return {
    id: options.id,
    title: options.title,
    ...(options.note ? { note: options.note } : {}),
    spec: {
      width: 320,
      height: { step: 26 },
      data: { values: rows },
      encoding: { y, x: { field: 'value', type: 'quantitative', title: options.axis } },
      layer: [
        {
          name: `${options.id.replace(/-/g, '_')}_bars`,
          mark: { type: 'bar', tooltip: true, color: '#4e79a7' },
        },
        {
          mark: { type: 'text', align: 'left', dx: 4, color: 'currentColor', fontSize: 11 },
          encoding: { text: { field: 'text' } },
        },
      ],
    },
    table: {
      caption: options.title,
      headers: ['', options.axis],
      numeric: [1],
      rows: rows.map((row) => [row.label, row.text]),
    },
  }
}
