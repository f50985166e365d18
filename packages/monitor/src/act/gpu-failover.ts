import { effectiveBatchOf, type LaunchSettings } from '@rigfit/core'
import type { SettingsChange } from './settings-change.js'

/**
 * Settings for running on `gpus` devices (0 = CPU) while keeping the effective batch: fewer data-parallel
 * replicas are made up with more accumulation, lowering the micro-batch only when the division is not whole.
 * When no whole split exists the nearest effective batch is used and the change says so.
 */
export function replanForGpus(settings: LaunchSettings, gpus: number): SettingsChange {
  const target = settings.effectiveBatch
  const replicas = Math.max(gpus, 1) * settings.nodes
  let microBatch = settings.microBatch
  while (microBatch > 1 && target % (microBatch * replicas) !== 0) microBatch -= 1
  const gradAccum = Math.max(1, Math.round(target / (microBatch * replicas)))
  const device = gpus === 0 ? 'cpu' : settings.device
  const precision =
    gpus === 0 && settings.precision !== null && settings.precision !== 'fp32' ? 'fp32' : settings.precision
  const next: LaunchSettings = {
    ...settings,
    device,
    gpus,
    microBatch,
    gradAccum,
    precision,
    effectiveBatch: 0,
  }
  next.effectiveBatch = effectiveBatchOf(next)
  const where = gpus === 0 ? 'the CPU' : `${gpus} GPU${gpus === 1 ? '' : 's'}`
  const changes = [
    `running on ${where} instead of ${settings.gpus === 0 ? 'the CPU' : `${settings.gpus} GPU${settings.gpus === 1 ? '' : 's'}`}`,
    `micro-batch ${settings.microBatch} → ${microBatch}, gradient accumulation ${settings.gradAccum} → ${gradAccum}`,
  ]
  if (next.effectiveBatch !== target) {
    changes.push(
      `effective batch ${target} → ${next.effectiveBatch}: ${target} sequences do not split evenly over ${where}`,
    )
  } else {
    changes.push(`effective batch stays ${target}`)
  }
  if (precision !== settings.precision) changes.push(`precision ${settings.precision} → fp32 for the CPU`)
  return { settings: next, changes }
}
