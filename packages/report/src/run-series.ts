import type { MonitorRecord, MonitorRecordOf } from '@rigfit/core'

/** The figures of a run, derived from its records only: what the page plots and tabulates. */
export interface SeriesPoint {
  /** Seconds since the run started. */
  t: number
  series: string
  value: number
}

export interface RunEvent {
  t: number
  kind: string
  text: string
}

export interface RunFigures {
  start: MonitorRecordOf<'start'> | null
  summary: MonitorRecordOf<'summary'> | null
  /** Seconds from the first record to the last. */
  durationSeconds: number
  loss: SeriesPoint[]
  tokensPerSecond: SeriesPoint[]
  /** GiB in use per GPU, and the plan's prediction for it. */
  memory: SeriesPoint[]
  temperature: SeriesPoint[]
  power: SeriesPoint[]
  events: RunEvent[]
}

const GIB = 2 ** 30

function ofType<T extends MonitorRecord['type']>(records: MonitorRecord[], type: T): MonitorRecordOf<T>[] {
  return records.filter((record): record is MonitorRecordOf<T> => record.type === type)
}

function eventOf(record: MonitorRecord, t: number): RunEvent | null {
  switch (record.type) {
    case 'detection':
      return { t, kind: record.cause, text: record.message }
    case 'action':
      return record.action === 'skipped'
        ? null
        : { t, kind: `${record.action} (${record.cause})`, text: record.reason }
    case 'launch': {
      if (record.attempt === 1) return null
      const s = record.settings
      const settings = s
        ? `: micro-batch ${s.microBatch} × accumulation ${s.gradAccum}, ${s.gpus} GPU${s.gpus === 1 ? '' : 's'}${s.gradCheckpointing ? ', checkpointing' : ''}${s.precision ? `, ${s.precision}` : ''}`
        : ''
      return { t, kind: 'relaunch', text: `attempt ${record.attempt}${settings}` }
    }
    default:
      return null
  }
}

export function runFigures(records: MonitorRecord[]): RunFigures {
  const first = records[0]
  const t0 = first ? Date.parse(first.time) : 0
  const at = (record: MonitorRecord) => Math.max(0, (Date.parse(record.time) - t0) / 1000)
  const metrics = ofType(records, 'metrics')
  const samples = ofType(records, 'sample')
  const gpuSeries = (
    pick: (gpu: MonitorRecordOf<'sample'>['gpus'][number]) => number | null,
    label = (i: number) => `GPU ${i}`,
  ) =>
    samples.flatMap((sample) =>
      sample.gpus.flatMap((gpu) => {
        const value = pick(gpu)
        return value === null ? [] : [{ t: at(sample), series: label(gpu.index), value }]
      }),
    )
  const last = records.at(-1)
  return {
    start: ofType(records, 'start')[0] ?? null,
    summary: ofType(records, 'summary').at(-1) ?? null,
    durationSeconds: last ? at(last) : 0,
    loss: metrics.flatMap((m) => (m.loss === null ? [] : [{ t: at(m), series: 'loss', value: m.loss }])),
    tokensPerSecond: speedSeries(records, metrics, at),
    memory: [
      ...gpuSeries(
        (gpu) => (gpu.memoryUsedBytes === null ? null : gpu.memoryUsedBytes / GIB),
        (i) => `GPU ${i} used`,
      ),
      ...gpuSeries(
        (gpu) => (gpu.predictedBytes === null ? null : gpu.predictedBytes / GIB),
        (i) => `GPU ${i} predicted`,
      ),
    ],
    temperature: gpuSeries((gpu) => gpu.temperatureC),
    power: gpuSeries((gpu) => gpu.powerWatts),
    events: records.flatMap((record) => eventOf(record, at(record)) ?? []),
  }
}

/** Measured tokens/s, and the plan's speed beside it at the same times, so the page shows how far they are apart. */
function speedSeries(
  records: MonitorRecord[],
  metrics: MonitorRecordOf<'metrics'>[],
  at: (record: MonitorRecord) => number,
): SeriesPoint[] {
  const planned = ofType(records, 'start')[0]?.plannedTokensPerSecond ?? null
  return metrics.flatMap((m) =>
    m.tokensPerSecond === null
      ? []
      : [
          { t: at(m), series: 'measured', value: m.tokensPerSecond },
          ...(planned !== null && planned > 0 ? [{ t: at(m), series: 'planned', value: planned }] : []),
        ],
  )
}
