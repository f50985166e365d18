import type { MemoryBreakdown } from '@rigfit/core'
import type { Chart } from './chart.js'
import { MEMORY_PARTS, memoryRows, PART_LABELS, partBytes } from './memory-parts.js'
import { gibCell, toGiB } from './units.js'

export interface MemoryBar {
  /** The bar's label: a mode, or the estimate's device. */
  label: string
  memory: MemoryBreakdown
  /** The device's memory; null when the estimate has no device. */
  capacityBytes: number | null
  /** The mode's budget (capacity × budget fraction); null without one. */
  budgetBytes: number | null
}

const LINES = ['total (nvidia-smi)', 'budget', 'capacity']

/** Per-device memory as stacked bars, one per mode (or one for an estimate), with the total, budget and capacity ticks. */
export function memoryChart(id: string, title: string, bars: MemoryBar[]): Chart {
  const parts = bars.flatMap((bar) => memoryRows(bar.label, bar.memory))
  const lines = bars.flatMap((bar) =>
    [
      { bar: bar.label, line: LINES[0], gib: toGiB(bar.memory.total) },
      bar.budgetBytes === null ? null : { bar: bar.label, line: LINES[1], gib: toGiB(bar.budgetBytes) },
      bar.capacityBytes === null ? null : { bar: bar.label, line: LINES[2], gib: toGiB(bar.capacityBytes) },
    ].filter((row) => row !== null),
  )
  const y = { field: 'bar', type: 'nominal', title: null, sort: bars.map((bar) => bar.label) } as const
  return {
    id,
    title,
    note: 'Stacked: what training allocates, the allocator reserve on top of the peak, and the CUDA context. The terms are not all held at the same moment, so the stack can pass the total; the ticks mark the total nvidia-smi would show, the budget and the device capacity.',
    spec: {
      width: 560,
      height: { step: 34 },
      layer: [
        {
          name: 'memory_parts',
          data: { values: parts },
          mark: { type: 'bar', tooltip: true },
          encoding: {
            y,
            x: { field: 'gib', type: 'quantitative', stack: 'zero', title: 'memory per device (GiB)' },
            color: {
              field: 'part',
              type: 'nominal',
              title: 'memory',
              scale: { domain: PART_LABELS, scheme: 'tableau10' },
            },
            order: { field: 'order', type: 'quantitative' },
          },
        },
        {
          name: 'memory_lines',
          data: { values: lines },
          mark: { type: 'tick', thickness: 3, bandSize: 30 },
          encoding: {
            y,
            x: { field: 'gib', type: 'quantitative' },
            color: {
              field: 'line',
              type: 'nominal',
              title: 'line',
              scale: { domain: LINES, range: ['#6e7781', '#e36209', '#cf222e'] },
            },
          },
        },
      ],
      resolve: { scale: { color: 'independent' } },
    },
    table: {
      caption: 'Per-device memory in GiB',
      headers: [
        '',
        ...MEMORY_PARTS.map(([, label]) => label),
        'peak allocated',
        'reserved',
        'total',
        'budget',
        'capacity',
      ],
      numeric: Array.from({ length: MEMORY_PARTS.length + 6 }, (_, i) => i + 1),
      rows: bars.map((bar) => [
        bar.label,
        ...MEMORY_PARTS.map(([part]) => gibCell(partBytes(bar.memory, part))),
        gibCell(bar.memory.peakAllocated),
        gibCell(bar.memory.reserved),
        gibCell(bar.memory.total),
        bar.budgetBytes === null ? null : gibCell(bar.budgetBytes),
        bar.capacityBytes === null ? null : gibCell(bar.capacityBytes),
      ]),
    },
  }
}
