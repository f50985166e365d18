import { selectTrainingDevices, type TrainingDevices } from '../plan/training-devices.js'
import type { CalibrationDevice, CalibrationSettings } from '../schemas/calibration-record.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { TrainingPlan } from '../schemas/training-plan.js'
import { deviceFingerprint } from './speed-correction.js'

/** The devices a plan trains on, as the store names them: the GPUs (name, count), or the CPU (brand, logical cores). */
export function calibrationDevice(devices: TrainingDevices, profile: HardwareProfile): CalibrationDevice {
  const cpu = devices.kind === 'cpu'
  const name = cpu ? profile.cpu.brand : devices.name
  const count = Math.max(1, cpu ? profile.cpu.logicalCores : devices.gpus.length)
  return { fingerprint: deviceFingerprint(devices.kind, name, count), kind: devices.kind, name, count }
}

export function devicesFingerprint(devices: TrainingDevices, profile: HardwareProfile): string {
  return calibrationDevice(devices, profile).fingerprint
}

/** This machine's devices when it runs `gpus` of its GPUs (0 or null: as a plan would pick them). */
export function machineDevice(profile: HardwareProfile, gpus: number | null): CalibrationDevice {
  return calibrationDevice(selectTrainingDevices(profile, gpus && gpus > 0 ? gpus : null), profile)
}

/** The settings of a plan that decide its speed, as the calibration store keeps them. */
export function calibrationSettingsOf(
  plan: Pick<TrainingPlan, 'settings' | 'params'> & { model: { modelType: string } },
): CalibrationSettings {
  const s = plan.settings
  return {
    modelFamily: plan.model.modelType,
    params: plan.params.total,
    seq: s.seq,
    microBatch: s.microBatch,
    gradAccum: s.gradAccum,
    precision: s.precision,
    method: s.method,
    gradCheckpointing: s.gradCheckpointing,
    threads: s.threads,
    gpus: s.gpus,
    nodes: s.nodes,
  }
}
