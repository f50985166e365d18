import { type Gpu, type HardwareProfile, RigfitError } from '@rigfit/core'

/**
 * `--interconnect`: NVLink or PCIe between the planned node's GPUs (every pair, as a switch links them), or
 * InfiniBand between its nodes. A Mac or a single GPU has no GPU link to set.
 */
export function linkedAs(
  current: HardwareProfile['interconnect'],
  link: 'nvlink' | 'pcie' | 'infiniband',
  gpus: Gpu[],
): HardwareProfile['interconnect'] {
  if (link === 'infiniband') return { ...current, network: 'infiniband' }
  const discrete = gpus.filter((gpu) => !gpu.integrated)
  if (discrete.length < 2) {
    throw new RigfitError(
      'usage',
      'E_OVERRIDE',
      `--interconnect ${link} links GPUs, and this node has ${discrete.length === 0 ? 'none' : 'one'}.`,
      {
        suggestion:
          'Plan several GPUs with --gpus N, or use --interconnect infiniband for the network between nodes.',
      },
    )
  }
  const links = discrete.flatMap((a, i) =>
    discrete
      .slice(i + 1)
      .map((b) => ({ a: a.index, b: b.index, kind: link, detail: `${link} (--interconnect)` })),
  )
  return { ...current, kind: link, links }
}
