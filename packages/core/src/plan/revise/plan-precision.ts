import type { DeviceIdentity } from '../../device/capabilities.js'
import type { Precision } from '../../schemas/common.js'
import type { TrainingPlan } from '../../schemas/training-plan.js'

/** The half type a precision computes in, or null for fp32. */
export function halfType(precision: Precision): 'bf16' | 'fp16' | null {
  if (precision.startsWith('bf16')) return 'bf16'
  if (precision.startsWith('fp16')) return 'fp16'
  return null
}

/** The plan's device for the capability checks (a ROCm plan records its gfx target as the capability). */
export function planDevice(plan: TrainingPlan): DeviceIdentity {
  return { kind: plan.settings.device, computeCapability: plan.hardware.computeCapability }
}
