import {
  type DeviceKind,
  effectiveBatchOf,
  type LaunchSettings,
  type Precision,
  type TrainingPlan,
} from '@rigfit/core'

/** Settings given by flags; they win over the plan's. */
export interface SettingsOverrides {
  microBatch?: number
  gradAccum?: number
  gradCheckpointing?: boolean
  precision?: Precision
}

/**
 * The first launch's settings: the plan's, with flag overrides. Without a plan the monitor knows the batch
 * only from --micro-batch; without either it knows nothing to shrink and answers null.
 */
export function initialSettings(
  plan: TrainingPlan | null,
  overrides: SettingsOverrides,
  detected: { device: DeviceKind; gpus: number },
): LaunchSettings | null {
  if (plan !== null) {
    const s = plan.settings
    const settings = {
      device: s.device,
      gpus: s.gpus,
      nodes: s.nodes,
      microBatch: overrides.microBatch ?? s.microBatch,
      gradAccum: overrides.gradAccum ?? s.gradAccum,
      gradCheckpointing: overrides.gradCheckpointing ?? s.gradCheckpointing,
      precision: overrides.precision ?? s.precision,
    }
    return { ...settings, effectiveBatch: effectiveBatchOf(settings) }
  }
  if (overrides.microBatch === undefined) return null
  const settings = {
    device: detected.device,
    gpus: detected.gpus,
    nodes: 1,
    microBatch: overrides.microBatch,
    gradAccum: overrides.gradAccum ?? 1,
    gradCheckpointing: overrides.gradCheckpointing ?? false,
    precision: overrides.precision ?? null,
  }
  return { ...settings, effectiveBatch: effectiveBatchOf(settings) }
}

/** With `--configs`: the folder of exported configs the launch reads (the user's, or the copies made again). */
export const CONFIG_DIR_VARIABLE = 'RIGFIT_CONFIG_DIR'

/**
 * The RIGFIT_* variables of one launch. RIGFIT_ATTEMPT is always set; the settings' variables whenever the
 * monitor knows them, so a trainer can read them instead of (or besides) the plan file.
 */
export function launchEnv(
  settings: LaunchSettings | null,
  attempt: number,
  planFile: string | null,
): Record<string, string> {
  const env: Record<string, string> = { RIGFIT_ATTEMPT: String(attempt) }
  if (planFile !== null) env.RIGFIT_PLAN_FILE = planFile
  if (settings !== null) {
    env.RIGFIT_MICRO_BATCH = String(settings.microBatch)
    env.RIGFIT_GRAD_ACCUM = String(settings.gradAccum)
    env.RIGFIT_GRAD_CKPT = settings.gradCheckpointing ? '1' : '0'
    if (settings.precision !== null) env.RIGFIT_PRECISION = settings.precision
    env.RIGFIT_DEVICE = settings.device
  }
  return env
}

/**
 * Device selection for a launch restricted to some GPUs (after a failure): physical indexes as nvidia-smi
 * numbers them, so CUDA is told to number by PCI bus too. An empty list hides every GPU (CPU fallback).
 */
export function deviceSelectionEnv(
  visible: number[] | null,
  vendor: 'nvidia' | 'amd' | null,
): Record<string, string> {
  if (visible === null) return {}
  const list = visible.join(',')
  const env: Record<string, string> = { CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_VISIBLE_DEVICES: list }
  if (vendor === 'amd') env.HIP_VISIBLE_DEVICES = list
  return env
}

/** Physical GPU indexes from a numeric CUDA_VISIBLE_DEVICES; null when unset or not plain indexes (UUIDs, MIG). */
export function parseVisibleDevices(value: string | undefined): number[] | null {
  if (value === undefined) return null
  const trimmed = value.trim()
  if (trimmed === '') return []
  const parts = trimmed.split(',').map((part) => part.trim())
  if (!parts.every((part) => /^\d+$/.test(part))) return null
  return parts.map(Number)
}
