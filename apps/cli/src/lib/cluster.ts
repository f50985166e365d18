import { type HardwareProfile, RigfitError, selectTrainingDevices } from '@rigfit/core'
import { loadProfile } from '@rigfit/profiler'

export interface Cluster {
  /** The node every node is planned as: the weakest one. */
  profile: HardwareProfile
  nodes: number
  heterogeneous: boolean
  warning: string | null
}

/** A node's strength: training devices' memory first (what fits), then their count and compute. */
function strength(profile: HardwareProfile): [number, number, number] {
  const devices = selectTrainingDevices(profile)
  const count = Math.max(1, devices.gpus.length)
  return [
    devices.capacityBytes,
    count,
    devices.estimateDevice.fp16TensorTflops ?? devices.estimateDevice.fp32Tflops,
  ]
}

const describe = (profile: HardwareProfile) => {
  const devices = selectTrainingDevices(profile)
  return devices.gpus.length > 0 ? `${devices.gpus.length}x ${devices.name}` : `CPU ${devices.name}`
}

/**
 * Several saved profiles, one per node: data-parallel training steps at the pace of the slowest node and must
 * fit the smallest, so the plan is made for the weakest node (smallest device memory, then fewest GPUs, then
 * least compute) on every node, with a warning when the nodes differ.
 */
export async function loadCluster(files: string[]): Promise<Cluster> {
  if (files.length < 2) {
    throw new RigfitError(
      'usage',
      'E_CLUSTER_SIZE',
      '--cluster needs two or more profile files, one per node.',
      {
        suggestion:
          'Save each node with `rigfit profile --out node-a.json`, then `rigfit plan --cluster node-a.json node-b.json`.',
      },
    )
  }
  const profiles = await Promise.all(files.map((file) => loadProfile(file)))
  const ranked = profiles
    .map((profile, index) => ({ profile, index, key: strength(profile) }))
    .sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2] || a.index - b.index)
  const weakest = ranked[0] as (typeof ranked)[number]
  const kinds = new Set(profiles.map(describe))
  const heterogeneous = kinds.size > 1
  return {
    profile: weakest.profile,
    nodes: profiles.length,
    heterogeneous,
    warning: heterogeneous
      ? `The nodes differ (${[...kinds].join('; ')}): every node is planned as the weakest, ${files[weakest.index]} (${describe(weakest.profile)}), so the stronger nodes idle part of each step.`
      : null,
  }
}
