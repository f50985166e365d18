import type { LaunchSettings, Precision } from '@rigfit/core'
import type { SettingsChange } from './settings-change.js'

export type OomStep = SettingsChange | { exhausted: true; tried: string[] }

/**
 * The next rung after an out-of-memory failure. Halve the micro-batch and raise accumulation by the same
 * factor (effective batch unchanged); at micro-batch 1 enable gradient checkpointing; then leave fp32 for
 * mixed precision; then there is nothing left that keeps the training the same, and the ladder is exhausted.
 */
export function nextOomSettings(settings: LaunchSettings, computeCapability: string | null): OomStep {
  if (settings.microBatch > 1) {
    const product = settings.microBatch * settings.gradAccum
    const microBatch = largestDivisorAtMost(product, Math.floor(settings.microBatch / 2))
    const gradAccum = product / microBatch
    return {
      settings: { ...settings, microBatch, gradAccum },
      changes: [
        `micro-batch ${settings.microBatch} → ${microBatch}, gradient accumulation ${settings.gradAccum} → ${gradAccum} (effective batch stays ${settings.effectiveBatch})`,
      ],
    }
  }
  if (!settings.gradCheckpointing) {
    return {
      settings: { ...settings, gradCheckpointing: true },
      changes: [
        'gradient checkpointing enabled (micro-batch is already 1): activations are recomputed instead of kept',
      ],
    }
  }
  if (settings.precision === 'fp32') {
    const lower = mixedPrecisionFor(settings.device, computeCapability)
    return {
      settings: { ...settings, precision: lower },
      changes: [`precision fp32 → ${lower}: activations in 16 bits, master weights stay fp32`],
    }
  }
  return {
    exhausted: true,
    tried: [
      'micro-batch is 1',
      'gradient checkpointing is on',
      settings.precision === null
        ? 'precision unknown (no plan, no --precision)'
        : `precision is ${settings.precision}`,
    ],
  }
}

/** bf16 where the hardware has it (Ampere and newer, ROCm, CPU autocast), fp16 otherwise. */
function mixedPrecisionFor(device: LaunchSettings['device'], computeCapability: string | null): Precision {
  if (device === 'cuda') {
    const major = computeCapability === null ? Number.NaN : Number(computeCapability.split('.')[0])
    return major >= 8 ? 'bf16-mixed' : 'fp16-mixed'
  }
  if (device === 'mps') return 'fp16-mixed'
  return 'bf16-mixed'
}

function largestDivisorAtMost(value: number, limit: number): number {
  for (let candidate = Math.max(1, limit); candidate > 1; candidate -= 1) {
    if (value % candidate === 0) return candidate
  }
  return 1
}
