export {
  calibrationDevice,
  calibrationSettingsOf,
  devicesFingerprint,
  machineDevice,
} from './plan-query.js'
export {
  CALIBRATION_BOUNDS,
  type CalibrationQuery,
  type CorrectedSpeed,
  correctSpeed,
  deviceFingerprint,
} from './speed-correction.js'
