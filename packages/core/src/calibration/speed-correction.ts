import type {
  CalibrationRecord,
  CalibrationSettings,
  SpeedCalibration,
} from '../schemas/calibration-record.js'

/** What a prediction is for: the machine, the stack that will train, and the settings. */
export interface CalibrationQuery {
  fingerprint: string
  /** The stack that will run it; null: any stack's records, the nearest first. */
  stack: string | null
  settings: CalibrationSettings
}

export interface CorrectedSpeed {
  tokensPerSecond: number
  calibration: SpeedCalibration
}

/**
 * How far records may move a prediction. Records of the very settings are the speed itself (the bounds only
 * reject a broken record); records of other settings carry the machine's ratio to the model, which the further
 * the settings are, the less it transfers.
 */
export const CALIBRATION_BOUNDS: Record<Exclude<SpeedCalibration['match'], 'none'>, [number, number]> = {
  settings: [1 / 1000, 1000],
  family: [1 / 8, 8],
  device: [1 / 4, 4],
}

/** Records used per correction: the newest of the nearest tier. */
const MAX_RECORDS = 5

const sameSettings = (a: CalibrationSettings, b: CalibrationSettings) =>
  a.modelFamily === b.modelFamily &&
  a.params === b.params &&
  a.seq === b.seq &&
  a.microBatch === b.microBatch &&
  a.gradAccum === b.gradAccum &&
  a.precision === b.precision &&
  a.method === b.method &&
  a.gradCheckpointing === b.gradCheckpointing &&
  // A query that names no thread count (an estimate) matches records of any.
  (b.threads === null || a.threads === b.threads) &&
  a.gpus === b.gpus &&
  a.nodes === b.nodes

/** Distance between two settings: orders of magnitude apart in size and step, plus one per differing choice. */
function distance(a: CalibrationSettings, b: CalibrationSettings): number {
  const log = (x: number, y: number) => Math.abs(Math.log10(x / y))
  const tokens = (s: CalibrationSettings) => s.seq * s.microBatch
  return (
    log(a.params, b.params) +
    log(tokens(a), tokens(b)) +
    (a.precision === b.precision ? 0 : 1) +
    (a.method === b.method ? 0 : 1) +
    (a.gradCheckpointing === b.gradCheckpointing ? 0 : 0.5)
  )
}

const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

const newestFirst = (a: CalibrationRecord, b: CalibrationRecord) => b.recordedAt.localeCompare(a.recordedAt)

/**
 * Corrects a predicted speed from the calibration records of this machine. Nearest means the same device and stack
 * (required), then the same settings (the median measured speed of the newest records stands for the prediction),
 * then the same model family, then any record of the device: their median measured/predicted ratio, bounded,
 * scales the prediction. No record of the device and stack: the prediction stands, labelled as one.
 */
export function correctSpeed(
  records: readonly CalibrationRecord[],
  query: CalibrationQuery,
  predictedTokensPerSecond: number,
): CorrectedSpeed {
  const usable = records.filter(
    (record) =>
      record.device.fingerprint === query.fingerprint &&
      (query.stack === null || record.stack.name === query.stack),
  )
  if (predictedTokensPerSecond <= 0 || usable.length === 0) {
    return {
      tokensPerSecond: predictedTokensPerSecond,
      calibration: {
        label: 'predicted',
        predictedTokensPerSecond,
        factor: 1,
        match: 'none',
        bounds: [1, 1],
        records: [],
        reason: `No calibration record of ${query.stack ?? 'any stack'} on this machine (${query.fingerprint}): the speed model's prediction. \`rigfit calibrate\` with the same flags measures it.`,
      },
    }
  }
  const exact = usable.filter((record) => sameSettings(record.settings, query.settings)).sort(newestFirst)
  const family = usable.filter((record) => record.settings.modelFamily === query.settings.modelFamily)
  const match: Exclude<SpeedCalibration['match'], 'none'> =
    exact.length > 0 ? 'settings' : family.length > 0 ? 'family' : 'device'
  const pool = match === 'settings' ? exact : match === 'family' ? family : usable
  const chosen =
    match === 'settings'
      ? pool.slice(0, MAX_RECORDS)
      : [...pool]
          .sort(
            (a, b) =>
              distance(a.settings, query.settings) - distance(b.settings, query.settings) ||
              newestFirst(a, b),
          )
          .slice(0, MAX_RECORDS)
  const bounds = CALIBRATION_BOUNDS[match]
  const raw =
    match === 'settings'
      ? median(chosen.map((r) => r.measured.tokensPerSecond)) / predictedTokensPerSecond
      : median(chosen.map((r) => r.measured.tokensPerSecond / r.predicted.tokensPerSecond))
  const factor = Math.min(bounds[1], Math.max(bounds[0], raw))
  const bounded = factor !== raw ? ` (bounded from ×${raw.toFixed(3)})` : ''
  const what =
    match === 'settings'
      ? `the median of ${chosen.length} measurement(s) of these settings`
      : `the median measured/predicted ratio of the ${chosen.length} nearest record(s) of ${match === 'family' ? `${query.settings.modelFamily} models` : 'other models'}`
  return {
    tokensPerSecond: predictedTokensPerSecond * factor,
    calibration: {
      label: match === 'settings' ? 'measured on this machine' : 'predicted',
      predictedTokensPerSecond,
      factor,
      match,
      bounds,
      records: chosen.map((record) => ({
        recordedAt: record.recordedAt,
        source: record.source,
        stack: record.stack.version ? `${record.stack.name}@${record.stack.version}` : record.stack.name,
        modelFamily: record.settings.modelFamily,
        params: record.settings.params,
        measuredTokensPerSecond: record.measured.tokensPerSecond,
        predictedTokensPerSecond: record.predicted.tokensPerSecond,
      })),
      reason: `×${factor.toFixed(3)} on the model's ${Math.round(predictedTokensPerSecond)} tokens/s: ${what} on this machine (${query.fingerprint})${bounded}.`,
    },
  }
}

/** The fingerprint "same machine" compares: the training device's kind, name and count. */
export function deviceFingerprint(kind: string, name: string, count: number): string {
  return `${kind}:${name.trim().replace(/\s+/g, ' ')}:${count}`
}
