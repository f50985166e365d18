import type { CloudPreset } from '../plan/cloud-presets.js'
import type { GpuCatalogEntry } from '../schemas/gpu-catalog.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { Advice } from '../schemas/training-plan.js'

/**
 * Hardware that is not here, as profiles the planner can plan for. The profiler builds them (its what-if host
 * assumptions: RAM, CPUs, the Mac host); the hardware search takes them as an argument, so core stays free of
 * the profiler and tests can pass any builder.
 */
export interface WhatIfHardware {
  /** `--gpu NAME --gpus N`: `gpus` of one catalog GPU on an assumed host. */
  catalogGpus(entry: GpuCatalogEntry, gpus: number): HardwareProfile
  /** `--instance ID`: a cloud preset at its own GPU count. */
  cloudPreset(preset: CloudPreset): HardwareProfile
  /**
   * The profile with other GPUs: `gpus` of `gpu` (default: the profile's own GPU). The host RAM and CPUs the user
   * gave stay; assumed ones are assumed again for the new GPUs, as the command run with those flags would.
   */
  otherGpus(profile: HardwareProfile, change: { gpu?: GpuCatalogEntry; gpus: number }): HardwareProfile
  /** The warnings a plan for this profile carries about what it assumed: a GPU variant, the RAM, the CPUs. */
  assumptions(profile: HardwareProfile): Advice[]
}
