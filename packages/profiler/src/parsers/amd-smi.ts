import type { AmdGpuRow, AmdParseResult } from './rocm-smi.js'
import { isRecord, parseNumber, parseSize, parseText, tryParseJson } from './values.js'

/** A size field of amd-smi: `{ "value": 196592, "unit": "MB" }` (newer), `"196592 MB"` or a bare MB number (older). */
function amdSize(value: unknown): number | null {
  if (isRecord(value)) {
    const amount = typeof value.value === 'number' ? value.value : parseNumber(String(value.value ?? ''))
    return amount === null ? null : parseSize(`${amount} ${String(value.unit ?? 'MB')}`)
  }
  if (typeof value === 'number') return parseSize(value, 'mb')
  if (typeof value === 'string') return parseSize(value, 'mb')
  return null
}

/** A number field that may be wrapped as `{ value, unit }`. */
function amdNumber(value: unknown): number | null {
  if (isRecord(value))
    return typeof value.value === 'number' ? value.value : parseNumber(String(value.value ?? ''))
  if (typeof value === 'number') return value
  return typeof value === 'string' ? parseNumber(value) : null
}

function section(entry: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = entry[name]
  return isRecord(value) ? value : {}
}

/**
 * Parses `amd-smi static --json` and `amd-smi metric --json` (either or both; rows merge by GPU index).
 * amd-smi has printed a bare array, `{ "gpu_data": [...] }`, and sizes in three spellings across releases.
 */
export function parseAmdSmi(...texts: string[]): AmdParseResult {
  const byIndex = new Map<number, AmdGpuRow>()
  const problems: string[] = []
  for (const text of texts) {
    const json = tryParseJson(text)
    const entries = Array.isArray(json)
      ? json
      : isRecord(json) && Array.isArray(json.gpu_data)
        ? json.gpu_data
        : null
    if (!entries) {
      problems.push('amd-smi output is not a JSON list of GPUs')
      continue
    }
    for (const entry of entries) {
      if (!isRecord(entry) || typeof entry.gpu !== 'number') continue
      const row = byIndex.get(entry.gpu) ?? emptyRow(entry.gpu)
      mergeStatic(row, entry)
      mergeMetric(row, entry)
      byIndex.set(entry.gpu, row)
    }
  }
  const rows = [...byIndex.values()].sort((a, b) => a.index - b.index)
  if (rows.length === 0 && problems.length === 0) problems.push('amd-smi listed no GPUs')
  return { rows, problems }
}

function emptyRow(index: number): AmdGpuRow {
  return {
    index,
    name: null,
    gfxTarget: null,
    busId: null,
    vramTotalBytes: null,
    vramUsedBytes: null,
    temperatureC: null,
    powerDrawW: null,
    powerLimitW: null,
    driverVersion: null,
    pcieMaxGen: null,
    pcieMaxWidth: null,
  }
}

function mergeStatic(row: AmdGpuRow, entry: Record<string, unknown>): void {
  const asic = section(entry, 'asic')
  const bus = section(entry, 'bus')
  const vram = section(entry, 'vram')
  const driver = section(entry, 'driver')
  const limit = section(entry, 'limit')
  row.name ??= parseText(asic.market_name as string | undefined)
  row.gfxTarget ??= parseText(asic.target_graphics_version as string | undefined)?.toLowerCase() ?? null
  row.busId ??= parseText(bus.bdf as string | undefined)
  row.vramTotalBytes ??= amdSize(vram.size ?? vram.vram_size_mb ?? vram.vram_size)
  row.driverVersion ??=
    parseText(driver.version as string | undefined) ?? parseText(driver.driver_version as string | undefined)
  row.powerLimitW ??= amdNumber(limit.max_power ?? limit.socket_power)
  row.pcieMaxWidth ??= amdNumber(bus.max_pcie_width)
  const generation = /(\d+)/.exec(String(bus.pcie_interface_version ?? ''))?.[1]
  row.pcieMaxGen ??= generation ? Number(generation) : null
}

function mergeMetric(row: AmdGpuRow, entry: Record<string, unknown>): void {
  const usage = section(entry, 'mem_usage')
  const temperature = section(entry, 'temperature')
  const power = section(entry, 'power')
  row.vramTotalBytes ??= amdSize(usage.total_vram)
  row.vramUsedBytes ??= amdSize(usage.used_vram)
  row.temperatureC ??= amdNumber(temperature.edge) ?? amdNumber(temperature.hotspot)
  row.powerDrawW ??= amdNumber(power.socket_power) ?? amdNumber(power.average_socket_power)
}
