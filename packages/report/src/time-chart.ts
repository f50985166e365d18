import type { Chart } from './chart.js'
import type { RunEvent, SeriesPoint } from './run-series.js'

/** The most points one series draws: a long run is thinned to every k-th reading (said in the note). */
export const MAX_POINTS_PER_SERIES = 500

/** The time axis' unit, chosen by the run's length so that its labels stay short. */
export function timeUnit(durationSeconds: number): { name: string; seconds: number } {
  if (durationSeconds <= 600) return { name: 's', seconds: 1 }
  if (durationSeconds <= 36_000) return { name: 'min', seconds: 60 }
  return { name: 'h', seconds: 3600 }
}

/** Every k-th point of each series (its last one kept), at most MAX_POINTS_PER_SERIES each. */
export function thin(points: SeriesPoint[]): { points: SeriesPoint[]; stride: number } {
  const bySeries = new Map<string, SeriesPoint[]>()
  for (const point of points) bySeries.set(point.series, [...(bySeries.get(point.series) ?? []), point])
  let stride = 1
  for (const list of bySeries.values())
    stride = Math.max(stride, Math.ceil(list.length / MAX_POINTS_PER_SERIES))
  if (stride === 1) return { points, stride }
  const kept = [...bySeries.values()].flatMap((list) =>
    list.filter((_, i) => i % stride === 0 || i === list.length - 1),
  )
  return { points: kept, stride }
}

export interface TimeChartOptions {
  id: string
  title: string
  /** The value axis' title with its unit. */
  axis: string
  points: SeriesPoint[]
  events: RunEvent[]
  durationSeconds: number
  digits: number
  note?: string
}

/** Series over the run's time, one colour each, with a point per reading and a dashed rule at each event. */
export function timeChart(options: TimeChartOptions): Chart {
  const unit = timeUnit(options.durationSeconds)
  const { points, stride } = thin(options.points)
  const round = (value: number, digits: number) => Number(value.toFixed(digits))
  const rows = points.map((p) => ({
    t: round(p.t / unit.seconds, 3),
    series: p.series,
    value: round(p.value, options.digits),
  }))
  const events = options.events.map((e) => ({ t: round(e.t / unit.seconds, 3), kind: e.kind, text: e.text }))
  const name = options.id.replace(/-/g, '_')
  const x = { field: 't', type: 'quantitative', title: `time since start (${unit.name})` } as const
  const notes = [
    options.note,
    stride > 1 ? `Every ${stride}th reading is drawn; the table lists those drawn.` : null,
    events.length > 0 ? 'Dashed lines mark the run’s events (see the events table).' : null,
  ].filter((text) => text)
  return {
    id: options.id,
    title: options.title,
    ...(notes.length > 0 ? { note: notes.join(' ') } : {}),
    spec: {
      width: 440,
      height: 200,
      layer: [
        ...(events.length > 0
          ? [
              {
                name: `${name}_events`,
                data: { values: events },
                mark: { type: 'rule' as const, strokeDash: [4, 3], color: '#8b949e', tooltip: true },
                encoding: { x },
              },
            ]
          : []),
        {
          data: { values: rows },
          mark: { type: 'line' as const, strokeWidth: 1.5 },
          encoding: {
            x,
            // '~g' drops trailing zeros: a flat series (a steady temperature) would otherwise read 64.000000.
            y: {
              field: 'value',
              type: 'quantitative' as const,
              title: options.axis,
              scale: { zero: false },
              axis: { format: '~g' },
            },
            color: { field: 'series', type: 'nominal' as const, title: null },
          },
        },
        {
          name: `${name}_points`,
          data: { values: rows },
          mark: { type: 'point' as const, filled: true, size: 14, tooltip: true },
          encoding: {
            x,
            y: { field: 'value', type: 'quantitative' as const },
            color: { field: 'series', type: 'nominal' as const, title: null },
          },
        },
      ],
    },
    table: {
      caption: options.title,
      headers: [`time (${unit.name})`, 'series', options.axis],
      numeric: [0, 2],
      rows: rows.map((row) => [row.t, row.series, row.value]),
    },
  }
}
