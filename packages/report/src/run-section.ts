import type { MonitorRecord } from '@rigfit/core'
import { type Chart, renderChart } from './chart.js'
import { escapeHtml, renderFacts, renderTable, section } from './html.js'
import { type RunFigures, runFigures } from './run-series.js'
import { timeChart, timeUnit } from './time-chart.js'
import { grouped } from './units.js'

export interface RunReport {
  /** Where the records came from, for the page: the run's folder. */
  source: string
  records: MonitorRecord[]
  /** The node these records are from, in a run over several nodes (one monitor log per node). */
  node?: string | null
}

function summaryFacts(figures: RunFigures): string {
  const s = figures.summary
  const start = figures.start
  const facts: [string, string | null][] = [
    ['Command', start ? start.command.join(' ') : null],
    ['Started', start?.time ?? null],
  ]
  if (s) {
    const settings = s.settings
    facts.push(
      ['Outcome', s.outcome],
      ['Exit code', String(s.exitCode)],
      ['Reason', s.reason],
      ['Attempts', String(s.attempts)],
      ['Last step', s.lastStep === null ? null : String(s.lastStep)],
      ['Elapsed', `${grouped(s.elapsedSeconds, 1)} s`],
      ['Paused', `${grouped(s.pausedSeconds, 1)} s`],
      [
        'Final settings',
        settings
          ? `micro-batch ${settings.microBatch} × accumulation ${settings.gradAccum} = ${settings.effectiveBatch}, ${settings.gpus} GPU(s) on ${settings.device}${settings.gradCheckpointing ? ', gradient checkpointing' : ''}${settings.precision ? `, ${settings.precision}` : ''}`
          : null,
      ],
    )
  }
  return renderFacts(
    s ? 'Summary of the run' : 'The run (no summary yet: it is still running, or the monitor was killed)',
    facts,
  )
}

function eventsTimeline(figures: RunFigures, id: string): Chart {
  const unit = timeUnit(figures.durationSeconds)
  const rows = figures.events.map((e) => ({
    t: Number((e.t / unit.seconds).toFixed(3)),
    kind: e.kind,
    text: e.text,
  }))
  return {
    id: `${id}-events`,
    title: 'Events of the run',
    note: 'What the monitor detected and did: out-of-memory and relaunches with new settings, pauses, lost GPUs, restarts.',
    spec: {
      width: 440,
      height: { step: 22 },
      data: { values: rows },
      layer: [
        {
          name: 'run_events_marks',
          mark: { type: 'point', shape: 'diamond', filled: true, size: 90, color: '#e36209', tooltip: true },
          encoding: {
            x: {
              field: 't',
              type: 'quantitative',
              title: `time since start (${unit.name})`,
              scale: { domain: [0, Number((figures.durationSeconds / unit.seconds).toFixed(3))] },
            },
            y: { field: 'kind', type: 'nominal', title: null },
          },
        },
      ],
    },
    table: {
      caption: 'Events of the run',
      headers: [`time (${unit.name})`, 'event', 'what'],
      numeric: [0],
      rows: rows.map((row) => [row.t, row.kind, row.text]),
    },
  }
}

export async function runSection(report: RunReport): Promise<string> {
  // Each node of a multi-node run gets a section of its own, with ids of its own.
  const id = report.node ? `run-${report.node.replace(/[^\w-]/g, '_')}` : 'run'
  const figures = runFigures(report.records)
  const common = { events: figures.events, durationSeconds: figures.durationSeconds }
  const charts: Chart[] = []
  const missing: string[] = []
  const add = (
    points: RunFigures['loss'],
    chart: Omit<Parameters<typeof timeChart>[0], 'points' | 'events' | 'durationSeconds'>,
    absent: string,
  ) => {
    if (points.length > 0) charts.push(timeChart({ ...chart, ...common, points }))
    else missing.push(absent)
  }
  add(
    figures.loss,
    { id: `${id}-loss`, title: 'Training loss', axis: 'loss', digits: 4 },
    'no loss was reported by the trainer',
  )
  add(
    figures.tokensPerSecond,
    {
      id: `${id}-tokens`,
      title: 'Training speed against the plan',
      axis: 'tokens per second',
      digits: 1,
      note: "Measured: the trainer's reports. Planned: the plan's tokens/s (measured on this machine by rigfit calibrate, or predicted).",
    },
    'no tokens/s were reported by the trainer',
  )
  add(
    figures.memory,
    {
      id: `${id}-memory`,
      title: 'GPU memory against the plan',
      axis: 'memory (GiB)',
      digits: 3,
      note: 'Used: as nvidia-smi or sysfs read it. Predicted: the plan’s total per device for the settings of each attempt.',
    },
    'no GPU memory readings (no GPU was sampled)',
  )
  add(
    figures.temperature,
    { id: `${id}-temperature`, title: 'GPU temperature', axis: 'temperature (°C)', digits: 1 },
    'no GPU temperature readings',
  )
  add(
    figures.power,
    { id: `${id}-power`, title: 'GPU power', axis: 'power (W)', digits: 1 },
    'no GPU power readings',
  )
  if (figures.events.length > 0) charts.push(eventsTimeline(figures, id))
  const rendered = await Promise.all(charts.map(renderChart))
  const advice = report.records.filter(
    (r) => r.type === 'advice' || (r.type === 'notice' && r.level !== 'info'),
  )
  return section(id, report.node ? `Run on node ${report.node}` : 'Run', [
    `<p class="meta">${escapeHtml(`From ${report.source}: ${report.records.length} records.`)}</p>`,
    `<div class="scroll">${summaryFacts(figures)}</div>`,
    `<div class="grid">${rendered.join('\n')}</div>`,
    missing.length > 0 ? `<p class="note">${escapeHtml(`Not plotted: ${missing.join('; ')}.`)}</p>` : '',
    advice.length > 0
      ? renderTable({
          caption: 'Notices and advice',
          headers: ['time', 'message'],
          rows: advice.map((r) => [r.time, 'message' in r ? r.message : '']),
        })
      : '',
  ])
}
