import type { Gpu, HardwareProfile } from '@rigfit/core'
import type { NvidiaTopo } from './parsers/nvidia-topo.js'

/**
 * How the GPUs talk to each other: from `nvidia-smi topo -m` for NVIDIA; "none" with one GPU or fewer;
 * "unknown" for several GPUs whose topology no probe reported.
 */
export function buildInterconnect(gpus: Gpu[], topo: NvidiaTopo | null): HardwareProfile['interconnect'] {
  const discrete = gpus.filter((gpu) => !gpu.integrated)
  if (discrete.length <= 1) return { kind: 'none', links: [] }
  if (!topo || topo.links.length === 0) return { kind: 'unknown', links: [] }
  const kinds = new Set(topo.links.map((link) => link.kind))
  const kind = kinds.size === 1 && !kinds.has('unknown') ? (kinds.has('nvlink') ? 'nvlink' : 'pcie') : 'mixed'
  return { kind, links: topo.links.map((link) => ({ ...link })) }
}
