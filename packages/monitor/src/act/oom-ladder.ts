import { type LaunchSettings, mixedPrecisionFor } from '@rigfit/core'
import type { SettingsChange } from './settings-change.js'

export type OomStep = SettingsChange | { exhausted: true; tried: string[] }

/**
 * The next rung after an out-of-memory failure. Halve the micro-batch and raise accumulation by the same
 * factor (effective batch unchanged); at micro-batch 1 enable gradient checkpointing; then leave fp32 for
 * mixed precision (core's rule: bf16 where the device has it natively, else fp16 on a GPU; a CPU without bf16
 * instructions has no such rung); then there is nothing left that keeps the training the same, and the ladder
 * is exhausted. `cpuBf16` says whether this host's CPU has them (AVX512_BF16 or AMX).
 */
export function nextOomSettings(
  settings: LaunchSettings,
  computeCapability: string | null,
  cpuBf16 = false,
): OomStep {
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
  const lower =
    settings.precision === 'fp32'
      ? mixedPrecisionFor({ kind: settings.device, computeCapability, cpuBf16 })
      : null
  if (lower !== null) {
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
        : settings.precision === 'fp32'
          ? 'precision is fp32 and this CPU has no native bf16'
          : `precision is ${settings.precision}`,
    ],
  }
}

function largestDivisorAtMost(value: number, limit: number): number {
  for (let candidate = Math.max(1, limit); candidate > 1; candidate -= 1) {
    if (value % candidate === 0) return candidate
  }
  return 1
}
