import { isRecord, parseNumber, parseText, tryParseJson } from './values.js'

export interface IntelXpuRow {
  index: number
  name: string
  busId: string | null
  memoryBytes: number | null
}

/** Parses `xpu-smi discovery -j`: `{ "device_list": [{ "device_id", "device_name", "pci_bdf_address", ... }] }`. */
export function parseXpuSmiDiscovery(text: string): IntelXpuRow[] {
  const json = tryParseJson(text)
  const list = isRecord(json) && Array.isArray(json.device_list) ? json.device_list : []
  return list.flatMap((item) => {
    if (!isRecord(item) || typeof item.device_id !== 'number') return []
    const name = parseText(item.device_name as string | undefined)
    if (!name) return []
    return [
      {
        index: item.device_id,
        name,
        busId: parseText(item.pci_bdf_address as string | undefined),
        memoryBytes: parseNumber(String(item.memory_physical_size_byte ?? '')),
      },
    ]
  })
}
