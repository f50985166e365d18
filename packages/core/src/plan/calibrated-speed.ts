import { devicesFingerprint } from '../calibration/plan-query.js'
import { correctSpeed } from '../calibration/speed-correction.js'
import type { SpeedCalibration } from '../schemas/calibration-record.js'
import type { Throughput } from '../schemas/estimate.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { DecisionReader } from './decided.js'
import type { PlanOptions } from './generate.js'
import type { Candidate } from './search.js'
import type { TrainingDevices } from './training-devices.js'

export interface CalibratedSpeed {
  tokensPerSecond: number
  throughput: Throughput | null
  calibration: SpeedCalibration | undefined
}

/**
 * The plan's speed: the search winner's predicted tokens/s, corrected from this machine's calibration records
 * when the caller passed them (`PlanOptions.calibration`). The correction is traced as the `throughput` setting,
 * so `rigfit explain throughput` shows the records and the factor. Step time and MFU follow the corrected speed.
 */
export function calibratedSpeed(input: {
  options: PlanOptions
  reader: DecisionReader
  best: Candidate
  devices: TrainingDevices
  profile: HardwareProfile
  shape: { gpus: number; nodes: number }
  threads: number
}): CalibratedSpeed {
  const { best, options } = input
  const predicted = best.tokensPerSecond
  const throughput = best.result.throughput
  if (!options.calibration) return { tokensPerSecond: predicted, throughput, calibration: undefined }
  const fingerprint = devicesFingerprint(input.devices, input.profile)
  const { tokensPerSecond, calibration } = correctSpeed(
    options.calibration.records,
    {
      fingerprint,
      stack: options.calibration.stack,
      settings: {
        modelFamily: best.model.modelType,
        params: best.result.params.total,
        seq: best.seq,
        microBatch: best.microBatch,
        gradAccum: best.gradAccum,
        precision: best.precision,
        method: best.method,
        gradCheckpointing: best.gradCheckpointing,
        threads: input.threads,
        gpus: input.shape.gpus,
        nodes: input.shape.nodes,
      },
    },
    predicted,
  )
  input.reader.settle(
    'throughput',
    Math.round(tokensPerSecond),
    `${calibration.label}: ${calibration.reason}`,
    {
      fingerprint,
      factor: calibration.factor,
      match: calibration.match,
      predictedTokensPerSecond: Math.round(predicted),
      records: calibration.records,
    },
  )
  const factor = calibration.factor
  return {
    tokensPerSecond,
    calibration,
    throughput: throughput && {
      tokensPerSecond,
      tokensPerSecondPerDevice: throughput.tokensPerSecondPerDevice * factor,
      stepSeconds: throughput.stepSeconds / factor,
      mfu: throughput.mfu * factor,
    },
  }
}
