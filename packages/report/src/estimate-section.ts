import { EstimateResult } from '@rigfit/core'
import { z } from 'zod'
import type { Chart } from './chart.js'
import { renderChart } from './chart.js'
import { escapeHtml, renderFacts, section } from './html.js'
import { memoryChart } from './memory-chart.js'
import { gibCell, grouped, toGiB } from './units.js'

/** The device memory of one point of a sweep: the estimate with one setting changed. */
export const SweepPoint = z.object({
  value: z.number().int().positive(),
  totalBytes: z.number().nonnegative(),
  fits: z.boolean().nullable(),
})
export type SweepPoint = z.infer<typeof SweepPoint>

export const EstimateReport = z.object({
  /** The settings the estimate was made for, as label and value (model, sequence, micro-batch, …). */
  settings: z.array(z.tuple([z.string(), z.string()])),
  /** The device, or null for a memory-only estimate. */
  device: z.string().nullable(),
  /** The estimated micro-batch and sequence (marked in the sweeps); null when the settings are not known. */
  microBatch: z.number().int().positive().nullable(),
  seq: z.number().int().positive().nullable(),
  result: EstimateResult,
  /** Memory as the micro-batch and the sequence grow, up to the first that does not fit; null when not computed. */
  sweeps: z.object({ microBatch: z.array(SweepPoint), seq: z.array(SweepPoint) }).nullable(),
})
export type EstimateReport = z.infer<typeof EstimateReport>

function sweepChart(
  id: string,
  title: string,
  axis: string,
  points: SweepPoint[],
  current: number | null,
  capacity: number | null,
): Chart {
  const rows = points.map((p) => ({
    x: p.value,
    gib: toGiB(p.totalBytes),
    fit: p.fits === false ? 'out of memory' : p.value === current ? 'as estimated' : 'fits',
  }))
  const name = id.replace(/-/g, '_')
  return {
    id,
    title,
    note: `Each point is the estimate with only the ${axis} changed${capacity === null ? '' : '; the red line is the device capacity, and the last point past it is the first that runs out of memory'}.`,
    spec: {
      width: 420,
      height: 200,
      layer: [
        {
          data: { values: rows },
          mark: { type: 'line', color: '#4e79a7' },
          encoding: {
            x: {
              field: 'x',
              type: 'quantitative',
              title: axis,
              scale: { type: 'log', base: 2 },
              axis: { tickMinStep: 1 },
            },
            y: { field: 'gib', type: 'quantitative', title: 'memory per device (GiB)' },
          },
        },
        {
          name: `${name}_points`,
          data: { values: rows },
          mark: { type: 'point', filled: true, size: 50, tooltip: true },
          encoding: {
            x: { field: 'x', type: 'quantitative', scale: { type: 'log', base: 2 } },
            y: { field: 'gib', type: 'quantitative' },
            color: {
              field: 'fit',
              type: 'nominal',
              title: null,
              scale: {
                domain: ['fits', 'as estimated', 'out of memory'],
                range: ['#4e79a7', '#59a14f', '#cf222e'],
              },
            },
          },
        },
        ...(capacity === null
          ? []
          : [
              {
                name: `${name}_capacity`,
                data: { values: [{ gib: toGiB(capacity) }] },
                mark: { type: 'rule' as const, color: '#cf222e', strokeDash: [6, 3], size: 2 },
                encoding: { y: { field: 'gib', type: 'quantitative' as const } },
              },
            ]),
      ],
    },
    table: {
      caption: title,
      headers: [axis, 'memory per device', 'fits'],
      numeric: [0, 1],
      rows: points.map((p) => [
        p.value,
        gibCell(p.totalBytes),
        p.fits === null ? null : p.fits ? 'yes' : 'no',
      ]),
    },
  }
}

export async function estimateSection(report: EstimateReport): Promise<string> {
  const { result } = report
  const charts: Chart[] = [
    memoryChart('estimate-memory', 'Memory per device, estimated', [
      {
        label: report.device ?? 'estimate',
        memory: result.perDevice,
        capacityBytes: result.capacity,
        budgetBytes: null,
      },
    ]),
  ]
  if (report.sweeps) {
    charts.push(
      sweepChart(
        'estimate-micro-batch',
        'Memory vs micro-batch',
        'micro-batch (sequences)',
        report.sweeps.microBatch,
        report.microBatch,
        result.capacity,
      ),
      sweepChart(
        'estimate-seq',
        'Memory vs sequence length',
        'sequence length (tokens)',
        report.sweeps.seq,
        report.seq,
        result.capacity,
      ),
    )
  }
  const rendered = await Promise.all(charts.map(renderChart))
  const facts: [string, string | null][] = [
    ...report.settings,
    ['Device', report.device],
    ['Parameters', `${grouped(result.params.total)} (${grouped(result.params.trainable)} trained)`],
    ['Total per device', gibCell(result.perDevice.total)],
    ...(result.perDevice.releasable > 0
      ? [['Of it, cache released when full', gibCell(result.perDevice.releasable)] as [string, string]]
      : []),
    ['Capacity', result.capacity === null ? null : gibCell(result.capacity)],
    ['Fits', result.fits === null ? null : result.fits ? 'yes' : 'no'],
    ['Host RAM for offloaded states', gibCell(result.host.total)],
    ['Tokens/s', result.throughput ? grouped(result.throughput.tokensPerSecond) : null],
    ['Step time', result.throughput ? `${grouped(result.throughput.stepSeconds, 3)} s` : null],
  ]
  return section('estimate', 'Estimate', [
    `<div class="scroll">${renderFacts('The estimate', facts)}</div>`,
    rendered[0] as string,
    rendered.length > 1
      ? `<div class="grid">${rendered.slice(1).join('\n')}</div>`
      : `<p class="note">${escapeHtml('The sweeps over micro-batch and sequence come with `rigfit estimate … --report FILE`, which knows the settings.')}</p>`,
  ])
}
