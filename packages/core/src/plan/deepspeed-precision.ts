import type { Offload, Precision, Sharding } from '../schemas/common.js'

/**
 * The precision a ZeRO run actually trains in. DeepSpeed's `bf16` and `fp16` modes keep fp32 master weights and
 * fp32 optimizer states beside the half weights (its BF16 and FP16 optimizers, and ZeRO's partitions, step the
 * fp32 copies), which is the mixed variant's memory, not the pure-half plan's. So a ZeRO candidate is planned,
 * priced and exported as the mixed variant of a pure-half precision; FSDP and DDP honour pure half.
 */
export function deepSpeedPrecision(precision: Precision, sharding: Sharding, offload: Offload): Precision {
  return runsUnderDeepSpeed(sharding, offload) ? deepSpeedTrainedPrecision(precision) : precision
}

/** The precision DeepSpeed trains a plan's precision in: the mixed variant of pure half, others as they are. */
export function deepSpeedTrainedPrecision(precision: Precision): Precision {
  if (precision === 'bf16-true') return 'bf16-mixed'
  if (precision === 'fp16-true') return 'fp16-mixed'
  return precision
}

/**
 * Whether every format runs the plan under DeepSpeed: ZeRO, and FSDP offloading the optimizer states but not the
 * parameters, which FSDP cannot do and the exports run as ZeRO-3.
 */
export function runsUnderDeepSpeed(sharding: Sharding, offload: Offload): boolean {
  return sharding.startsWith('zero') || (sharding === 'fsdp' && offload === 'optimizer')
}
