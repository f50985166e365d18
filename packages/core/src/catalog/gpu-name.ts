/**
 * A GPU name taken apart for matching: the model tokens ("rtx", "4060", "ti"), and the variant details a name
 * may carry (memory size, form factor, Apple GPU core count). Vendor and brand words are dropped, and letters
 * and digits are split apart, so "NVIDIA GeForce RTX4090", "RTX 4090" and "4090" all reduce to the same tokens.
 */
export interface GpuNameKey {
  tokens: ReadonlySet<string>
  memoryGB: number | null
  form: 'sxm' | 'pcie' | 'nvl' | null
  gpuCores: number | null
}

/** Words that name a vendor or brand, not a model: dropped from both sides of a match. */
export const GPU_NAME_NOISE: ReadonlySet<string> = new Set([
  'nvidia',
  'geforce',
  'tesla',
  'quadro',
  'amd',
  'ati',
  'intel',
  'radeon',
  'instinct',
  'apple',
  'gpu',
  'graphics',
  'generation',
  'card',
  'series',
  'corporation',
  'inc',
  'r',
  'tm',
])

/** Product-line prefixes a user may leave out ("4090" for "RTX 4090", "B580" for "Arc B580"). */
export const OPTIONAL_TOKENS: ReadonlySet<string> = new Set(['rtx', 'gtx', 'rx', 'arc'])

export function parseGpuName(name: string): GpuNameKey {
  let text = ` ${name.toLowerCase()} `
  let gpuCores: number | null = null
  let memoryGB: number | null = null
  let form: GpuNameKey['form'] = null

  text = text.replace(/(\d+)\s*-?\s*cores?(\s+gpu)?/, (_m, cores: string) => {
    gpuCores = Number(cores)
    return ' '
  })
  text = text.replace(/[-_/,()[\]:;]+/g, ' ')
  text = text.replace(/(\d+)\s*gb\b/, (_m, gb: string) => {
    memoryGB = Number(gb)
    return ' '
  })
  if (/\bnvl\b/.test(text)) form = 'nvl'
  else if (/\bsxm\d?\b/.test(text) || /\bhbm3\b/.test(text)) form = 'sxm'
  else if (/\bpcie\b/.test(text)) form = 'pcie'
  text = text
    .replace(/\b(nvl|sxm\d?|pcie|hbm\d?e?)\b/g, ' ')
    // Radeon PRO W-series: the W already says "pro", so "W7900" and "Radeon PRO W7900" are one card.
    .replace(/\bpro\s+w(?=\s*\d)/g, 'w')
    .replace(/\b(mobile|max\s?q)\b/g, 'laptop')
    .replace(/([a-z])(\d)/g, '$1 $2')
    .replace(/(\d)([a-z])/g, '$1 $2')
  const tokens = new Set(text.split(/\s+/).filter((token) => token !== '' && !GPU_NAME_NOISE.has(token)))
  return { tokens, memoryGB, form, gpuCores }
}

/**
 * A query names a catalog name when it says nothing the name does not (no "ti" for a plain 4060, no "laptop")
 * and leaves out nothing but product-line prefixes.
 */
export function sameModel(query: ReadonlySet<string>, candidate: ReadonlySet<string>): boolean {
  if (query.size === 0) return false
  for (const token of query) if (!candidate.has(token)) return false
  for (const token of candidate) if (!query.has(token) && !OPTIONAL_TOKENS.has(token)) return false
  return true
}
