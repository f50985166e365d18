import type { CloudPreset, GpuCatalogEntry, HardwareProfile } from '@rigfit/core'
import { whatIfProfile } from './what-if-profile.js'

/**
 * A cloud preset (`--instance`) as a what-if profile: its GPUs from the catalog, its RAM, vCPUs and cores, and
 * the GPU link the provider states. `gpus` plans the same instance family with another GPU count.
 */
export function presetProfile(
  preset: CloudPreset,
  catalog: GpuCatalogEntry[],
  gpus: number = preset.gpus,
): HardwareProfile {
  const profile = whatIfProfile(
    {
      gpu: preset.gpu,
      gpus,
      ramGiB: preset.ramGiB,
      cpus: preset.vcpus,
      physicalCores: preset.physicalCores,
    },
    catalog,
  )
  return {
    ...profile,
    overrides: [...profile.overrides, `instance=${preset.id}`],
    interconnect: {
      kind: gpus > 1 ? (preset.interconnect === 'nvlink' ? 'nvlink' : 'pcie') : 'none',
      links: profile.interconnect.links,
      network: preset.network,
    },
  }
}
