import { computeCapabilityNumber } from '../device/capabilities.js'
import type { Family, GpuVendor } from '../schemas/common.js'

/**
 * The plugin family of a GPU that no catalog knows, from its vendor, name and compute capability (NVIDIA, "8.9")
 * or LLVM target (AMD, "gfx1100"). Names decide first because the same compute capability spans product lines
 * (8.6 is both a GeForce RTX 3090 and an A40); the number decides when the name says nothing. GeForce RTX 50
 * cards (Blackwell, compute capability 12.x) have a pack of their own; datacenter Blackwell is 10.x.
 */
export function familyOf(vendor: GpuVendor, name: string, capabilityOrTarget: string | null): Family {
  if (vendor === 'apple') return 'apple'
  if (vendor === 'amd') return 'rdna'
  if (vendor === 'intel') return 'intel'
  if (vendor !== 'nvidia') return 'unknown'
  return nvidiaFamily(name.toLowerCase(), capabilityOrTarget)
}

const DATACENTER_NAMES = [
  /\b(tesla|quadro|grid|dgx)\b/,
  /\brtx\s*(a\d{3,4}|pro)\b/,
  /\brtx\s*\d{4}\s*(ada|blackwell)\b/,
  /\b(gh|gb)?[abhlptvk]\d{1,3}[a-z]?\b(?!\s*(ti|super))/,
  /\btitan\s*v\b/,
]

function nvidiaFamily(name: string, capability: string | null): Family {
  const geforce = name.match(/\b(?:rtx|gtx)\s*(\d{2})\d{2}\b/)
  if (geforce && !/\b(quadro|tesla)\b/.test(name) && !/\brtx\s*\d{4}\s*(ada|blackwell)\b/.test(name)) {
    const series = Number(geforce[1])
    if (series >= 50) return 'rtx50'
    if (series === 40) return 'rtx40'
    if (series === 30) return 'rtx30'
    return 'rtx20'
  }
  if (/\btitan\b/.test(name) && !/\btitan\s*v\b/.test(name)) return 'rtx20'
  if (DATACENTER_NAMES.some((pattern) => pattern.test(name))) return 'datacenter'
  const cc = computeCapabilityNumber(capability)
  if (!Number.isFinite(cc)) return 'unknown'
  if (cc >= 12) return 'rtx50'
  if (cc >= 9 || cc === 8) return 'datacenter'
  if (cc >= 8.9) return 'rtx40'
  if (cc >= 8.6) return 'rtx30'
  if (cc === 7 || cc === 7.2) return 'datacenter'
  return 'rtx20'
}
