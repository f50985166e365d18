import {
  CALIBRATION_SCHEMA_VERSION,
  type CalibrationRecord,
  calibrationSettingsOf,
  type HardwareProfile,
  machineDevice,
  RIGFIT_VERSION,
  type TrainingPlan,
} from '@rigfit/core'
import type { Measurement } from './measure.js'

/** The model's own prediction for a plan: before any correction the calibration store made to it. */
export function modelPrediction(plan: TrainingPlan): number {
  return plan.calibration?.predictedTokensPerSecond ?? plan.throughput.tokensPerSecond
}

/** One record of the calibration store, from a measurement of a plan on this machine. */
export function calibrationRecord(input: {
  source: CalibrationRecord['source']
  profile: HardwareProfile
  plan: TrainingPlan
  stack: { name: string; version: string | null }
  versions: Record<string, string>
  measured: Pick<
    Measurement,
    'tokensPerSecond' | 'stepSeconds' | 'steps' | 'seconds' | 'peakAllocatedBytes' | 'peakReservedBytes'
  >
  recordedAt: string
}): CalibrationRecord {
  const { plan, measured } = input
  return {
    schemaVersion: CALIBRATION_SCHEMA_VERSION,
    recordedAt: input.recordedAt,
    source: input.source,
    device: machineDevice(input.profile, plan.settings.gpus),
    stack: input.stack,
    versions: { ...input.versions, rigfit: RIGFIT_VERSION },
    settings: calibrationSettingsOf(plan),
    measured: {
      tokensPerSecond: measured.tokensPerSecond,
      stepSeconds: measured.stepSeconds,
      steps: measured.steps,
      seconds: measured.seconds,
      peakAllocatedBytes:
        measured.peakAllocatedBytes === null ? null : Math.round(measured.peakAllocatedBytes),
      peakReservedBytes: measured.peakReservedBytes === null ? null : Math.round(measured.peakReservedBytes),
    },
    predicted: { tokensPerSecond: modelPrediction(plan), rigfitVersion: RIGFIT_VERSION },
  }
}
