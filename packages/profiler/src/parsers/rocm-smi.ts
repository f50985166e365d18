import { z } from 'zod'
import { DeviceSet } from './devices.js'
import { jsonPath, parseLeniently } from './lenient.js'
import { inRange, outOfRange, RANGES } from './limits.js'
import { ProblemList } from './problems.js'
import { toolBytes, toolNumber, toolText } from './tool-fields.js'
import { isRecord, tryParseJson } from './values.js'

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

/** The rocm-smi keys of each figure, matched case-insensitively: ROCm has printed `Card Series` and `Card series`. */
const CARD_KEYS = {
  series: /^card series$/i,
  model: /^card model$/i,
  gfxTarget: /^gfx version$/i,
  busId: /^pci bus$/i,
  vramTotalBytes: /^vram total memory \(b\)$/i,
  vramUsedBytes: /^vram total used memory \(b\)$/i,
  edgeC: /^temperature \(sensor edge\) \(c\)$/i,
  junctionC: /^temperature \(sensor (junction|hotspot)\) \(c\)$/i,
  powerDrawW: /^(average|current socket) graphics package power \(w\)$/i,
  powerLimitW: /^max graphics package power \(w\)$/i,
} as const

const RocmSmiCard = z.object({
  series: toolText,
  model: toolText,
  gfxTarget: toolText,
  busId: toolText,
  vramTotalBytes: toolBytes(RANGES.vramBytes, 'b'),
  vramUsedBytes: toolBytes(RANGES.vramBytes, 'b'),
  edgeC: toolNumber(RANGES.celsius),
  junctionC: toolNumber(RANGES.celsius),
  powerDrawW: toolNumber(RANGES.watts),
  powerLimitW: toolNumber(RANGES.watts),
})

/** The figures of one card under rigfit's names, and which rocm-smi key each came from (for messages). */
function cardFields(card: Record<string, unknown>): {
  fields: Record<string, unknown>
  keys: Map<string, string>
} {
  const fields: Record<string, unknown> = {}
  const keys = new Map<string, string>()
  for (const [key, value] of Object.entries(card)) {
    if (key.length > 64) continue
    for (const [name, pattern] of Object.entries(CARD_KEYS)) {
      if (keys.has(name) || !pattern.test(key)) continue
      fields[name] = value
      keys.set(name, key)
    }
  }
  return { fields, keys }
}

/** The rocm-smi readings of each GPU that both the profile and the monitor's samples take. */
export const ROCM_SMI_READING_ARGS = [
  '--showproductname',
  '--showmeminfo',
  'vram',
  '--showtemp',
  '--showpower',
  '--showmaxpower',
] as const

/**
 * Parses `rocm-smi --showproductname --showmeminfo vram --showtemp --showpower --showmaxpower --showbus
 * --showdriverversion --json`: one object per `cardN`, plus `system` with the driver version. Each card is
 * validated field by field; a wrong field is reported with its JSON path and left out.
 */
export function parseRocmSmiJson(text: string): AmdParseResult {
  const json = tryParseJson(text)
  if (!isRecord(json)) return { rows: [], problems: ['rocm-smi output is not a JSON object'] }
  const problems = new ProblemList()
  const system = isRecord(json.system) ? json.system : {}
  const driverVersion = driverVersionOf(system, problems)
  const devices = new DeviceSet<AmdGpuRow>(problems)
  for (const [key, value] of Object.entries(json)) {
    const card = /^card(\d{1,4})$/.exec(key)
    if (!card || !isRecord(value)) continue
    const index = Number(card[1])
    if (!inRange(index, RANGES.gpuIndex)) {
      problems.add(`rocm-smi: ${key}: ${outOfRange(card[1], RANGES.gpuIndex)}`)
      continue
    }
    if (devices.full) {
      devices.overflow(`rocm-smi: ${key}`)
      break
    }
    const { fields, keys } = cardFields(value)
    const { data, issues } = parseLeniently(RocmSmiCard, fields)
    for (const issue of issues) {
      const path = issue.path.map((name) => keys.get(String(name)) ?? name)
      problems.add(() => `rocm-smi: ${jsonPath(key, path)}: ${issue.message}`)
    }
    if (!data) continue
    devices.add(
      {
        ...emptyAmdRow(index),
        name: data.series ?? data.model,
        gfxTarget: data.gfxTarget?.toLowerCase() ?? null,
        busId: data.busId,
        vramTotalBytes: data.vramTotalBytes,
        vramUsedBytes: data.vramUsedBytes,
        temperatureC: data.edgeC ?? data.junctionC,
        powerDrawW: data.powerDrawW,
        powerLimitW: data.powerLimitW,
        driverVersion,
      },
      `rocm-smi: ${key}`,
    )
  }
  const rows = devices.rows.sort((a, b) => a.index - b.index)
  if (rows.length === 0 && problems.count === 0) problems.add('rocm-smi listed no cards')
  return { rows, problems: problems.toArray() }
}

/** `system["Driver version"]`: text, or null (reported) when it is something else. */
function driverVersionOf(system: Record<string, unknown>, problems: ProblemList): string | null {
  const key = Object.keys(system).find((name) => /^driver version$/i.test(name))
  if (key === undefined) return null
  const parsed = toolText.safeParse(system[key])
  if (parsed.success) return parsed.data
  problems.add(`rocm-smi: ${jsonPath('system', [key])}: ${parsed.error.issues[0]?.message ?? 'invalid'}`)
  return null
}

/** A row that knows only its index; probes fill in what they read. */
export function emptyAmdRow(index: number): AmdGpuRow {
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
