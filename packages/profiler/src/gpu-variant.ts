import type { GpuCatalogEntry, HardwareProfile } from '@rigfit/core'

/**
 * A `--gpu` name that fits several catalog variants ("A100": 40 GB and 80 GB, SXM and PCIe) is planned for the
 * first and says so, with the others and how to name one: the profile's overrides carry it as
 * `gpu-variant=<query> -> <assumed> | <other> | <other>`, and plans turn it into a warning.
 */
const PREFIX = 'gpu-variant='

export function gpuVariantChange(query: string, assumed: GpuCatalogEntry, others: GpuCatalogEntry[]): string {
  return `${PREFIX}${query} -> ${[assumed, ...others].map((entry) => entry.name).join(' | ')}`
}

/** The variant a what-if profile assumed for an ambiguous GPU name, and the others it could have been. */
export function assumedGpuVariant(
  profile: HardwareProfile,
): { query: string; assumed: string; others: string[] } | null {
  const entry = [...profile.overrides].reverse().find((change) => change.startsWith(PREFIX))
  if (entry === undefined) return null
  const [query, names] = entry.slice(PREFIX.length).split(' -> ') as [string, string | undefined]
  const [assumed, ...others] = (names ?? '').split(' | ')
  if (!assumed || others.length === 0) return null
  return { query, assumed, others }
}

/** The warning a plan carries for an assumed variant. */
export function gpuVariantMessage(variant: { query: string; assumed: string; others: string[] }): string {
  return `"${variant.query}" names several GPUs; planned for ${variant.assumed}. The others: ${variant.others.join(', ')}. Name the one you have, e.g. --gpu "${variant.others[0]}".`
}
