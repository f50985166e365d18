import { checkPlan, type TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { loadFixturePlan } from './helpers/fixture-plans.js'

/** A TF32 plan moved onto another GPU architecture. */
function tf32On(device: TrainingPlan['settings']['device'], target: string | null): TrainingPlan {
  const plan = loadFixturePlan('rtx4090-bf16')
  return {
    ...plan,
    hardware: { ...plan.hardware, computeCapability: target },
    settings: { ...plan.settings, device, tf32: true },
  }
}
const tf32Refused = (plan: TrainingPlan) => checkPlan(plan).some((issue) => issue.field === 'settings.tf32')

describe('TF32 goes with the GPUs that have it', () => {
  it('accepts NVIDIA Ampere and newer and AMD CDNA3 (gfx94x), refuses older and other GPUs', () => {
    expect(tf32Refused(tf32On('cuda', '8.9'))).toBe(false)
    expect(tf32Refused(tf32On('rocm', 'gfx942'))).toBe(false)
    expect(tf32Refused(tf32On('cuda', '7.5'))).toBe(true)
    expect(tf32Refused(tf32On('rocm', 'gfx90a'))).toBe(true)
    expect(tf32Refused(tf32On('rocm', 'gfx1100'))).toBe(true)
    expect(tf32Refused(tf32On('rocm', null))).toBe(true)
  })

  it('an MI300 TF32 plan exports, with transformers` tf32 flag left out (it accepts CUDA only)', () => {
    const args = JSON.parse(
      exportPlan(tf32On('rocm', 'gfx942'), { format: 'hf' }).files.find(
        (f) => f.path === 'training_args.json',
      )?.content ?? '{}',
    ) as Record<string, unknown>
    expect(args.tf32).toBeUndefined()
  })
})
