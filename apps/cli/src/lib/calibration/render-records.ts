import type { CalibrationRecord } from '@rigfit/core'
import { fmtCount, table } from '../format.js'

/** The calibration store as a table: when, where, what trained, measured against predicted. */
export function renderRecords(store: string, records: readonly CalibrationRecord[]): string {
  if (records.length === 0)
    return `${store}: no records yet (rigfit calibrate, or a run under rigfit monitor, adds them).`
  const rows = records.map((r) => [
    r.recordedAt.slice(0, 19).replace('T', ' '),
    r.source,
    `${r.device.name} x${r.device.count}`,
    r.stack.version ? `${r.stack.name}@${r.stack.version}` : r.stack.name,
    `${r.settings.modelFamily} ${fmtCount(r.settings.params)}`,
    `${r.settings.microBatch}x${r.settings.gradAccum}x${r.settings.seq} ${r.settings.precision} ${r.settings.method}`,
    fmtCount(r.measured.tokensPerSecond),
    fmtCount(r.predicted.tokensPerSecond),
  ])
  return `${store}: ${records.length} record(s)\n${table([
    [
      'recorded',
      'source',
      'device',
      'stack',
      'model',
      'batch x accum x seq',
      'measured tok/s',
      'predicted tok/s',
    ],
    ...rows,
  ])}`
}
