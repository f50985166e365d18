import { isRecord, parseSize, tryParseJson } from './values.js'

export interface MacDisplayGpu {
  name: string
  vendor: 'apple' | 'amd' | 'intel' | 'nvidia' | 'other'
  cores: number | null
  /** "Metal 3", "Metal 2", or null when system_profiler does not say. */
  metalSupport: string | null
  builtIn: boolean
  /** Dedicated VRAM (Intel Macs with a discrete GPU); null for Apple silicon, where memory is unified. */
  vramBytes: number | null
  /** Shared VRAM reported for Intel integrated graphics. */
  sharedVramBytes: number | null
}

/** Parses `system_profiler SPDisplaysDataType -json` into the GPUs it lists (displays attached are ignored). */
export function parseSystemProfilerDisplays(text: string): MacDisplayGpu[] {
  const json = tryParseJson(text)
  const list = isRecord(json) && Array.isArray(json.SPDisplaysDataType) ? json.SPDisplaysDataType : []
  const gpus: MacDisplayGpu[] = []
  for (const item of list) {
    if (!isRecord(item)) continue
    const name = String(item.sppci_model ?? item._name ?? '').trim()
    if (!name) continue
    const vendorText = String(item.spdisplays_vendor ?? item.sppci_vendor ?? '').toLowerCase()
    const metal = String(item.spdisplays_mtlgpufamilysupport ?? item.spdisplays_metal ?? '')
    const metalMatch = /metal(\d+)/i.exec(metal)
    const cores = Number.parseInt(String(item.sppci_cores ?? ''), 10)
    gpus.push({
      name,
      vendor: vendorOf(`${vendorText} ${name.toLowerCase()}`),
      cores: Number.isFinite(cores) ? cores : null,
      metalSupport: metalMatch ? `Metal ${metalMatch[1]}` : /supported/i.test(metal) ? 'Metal' : null,
      builtIn: /builtin/i.test(String(item.sppci_bus ?? '')),
      vramBytes: parseSize((item.spdisplays_vram ?? item.sppci_vram) as string | undefined),
      sharedVramBytes: parseSize(item.spdisplays_vram_shared as string | undefined),
    })
  }
  return gpus
}

function vendorOf(text: string): MacDisplayGpu['vendor'] {
  if (text.includes('apple')) return 'apple'
  if (/\bamd\b|ati|radeon/.test(text)) return 'amd'
  if (text.includes('intel')) return 'intel'
  if (text.includes('nvidia')) return 'nvidia'
  return 'other'
}
