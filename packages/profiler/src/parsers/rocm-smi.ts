import { isRecord, parseNumber, parseText, tryParseJson } from './values.js'

export interface AmdGpuRow {
  index: number
  name: string | null
  gfxTarget: string | null
  busId: string | null
  vramTotalBytes: number | null
  vramUsedBytes: number | null
  temperatureC: number | null
  powerDrawW: number | null
  powerLimitW: number | null
  driverVersion: string | null
  pcieMaxGen: number | null
  pcieMaxWidth: number | null
}

export interface AmdParseResult {
  rows: AmdGpuRow[]
  problems: string[]
}

/** Looks a key up case-insensitively: rocm-smi has printed both `Card Series` and `Card series`. */
function pick(record: Record<string, unknown>, ...keys: string[]): string | undefined {
  const lowered = new Map(Object.entries(record).map(([key, value]) => [key.toLowerCase(), value]))
  for (const key of keys) {
    const value = lowered.get(key.toLowerCase())
    if (typeof value === 'string' || typeof value === 'number') return String(value)
  }
  return undefined
}

/** Keys that vary by ROCm version and sensor, matched by pattern. */
function pickMatching(record: Record<string, unknown>, pattern: RegExp): string | undefined {
  for (const [key, value] of Object.entries(record)) {
    if (pattern.test(key) && (typeof value === 'string' || typeof value === 'number')) return String(value)
  }
  return undefined
}

/**
 * Parses `rocm-smi --showproductname --showmeminfo vram --showtemp --showpower --showmaxpower --showbus
 * --showdriverversion --json`: one object per `cardN`, plus `system` with the driver version.
 */
export function parseRocmSmiJson(text: string): AmdParseResult {
  const json = tryParseJson(text)
  if (!isRecord(json)) return { rows: [], problems: ['rocm-smi output is not a JSON object'] }
  const system = isRecord(json.system) ? json.system : {}
  const driverVersion = parseText(pick(system, 'Driver version'))
  const rows: AmdGpuRow[] = []
  for (const [key, value] of Object.entries(json)) {
    const card = /^card(\d+)$/.exec(key)
    if (!card || !isRecord(value)) continue
    const series = parseText(pick(value, 'Card Series', 'Card series'))
    const model = parseText(pick(value, 'Card Model', 'Card model'))
    rows.push({
      index: Number(card[1]),
      name: series ?? model,
      gfxTarget: parseText(pick(value, 'GFX Version'))?.toLowerCase() ?? null,
      busId: parseText(pick(value, 'PCI Bus')),
      vramTotalBytes: parseNumber(pick(value, 'VRAM Total Memory (B)')),
      vramUsedBytes: parseNumber(pick(value, 'VRAM Total Used Memory (B)')),
      temperatureC:
        parseNumber(pick(value, 'Temperature (Sensor edge) (C)')) ??
        parseNumber(pickMatching(value, /^Temperature \(Sensor (junction|hotspot)\) \(C\)$/i)),
      powerDrawW: parseNumber(pickMatching(value, /(Average|Current Socket) Graphics Package Power \(W\)/i)),
      powerLimitW: parseNumber(pickMatching(value, /^Max Graphics Package Power \(W\)$/i)),
      driverVersion,
      pcieMaxGen: null,
      pcieMaxWidth: null,
    })
  }
  rows.sort((a, b) => a.index - b.index)
  return { rows, problems: rows.length === 0 ? ['rocm-smi listed no cards'] : [] }
}
