import { parseGrepDump } from './grep-dump.js'

/** The attribute files of one /sys/class/power_supply entry, by file name (`type`, `online`, `capacity`, ...). */
export type PowerSupplyEntries = Map<string, Record<string, string>>

export interface PowerSummary {
  batteryPresent: boolean
  onBattery: boolean
  /** null when no adapter entry exists at all (some desktops, most VMs). */
  acOnline: boolean | null
  percent: number | null
}

/** Supply types that feed the machine from outside; names vary (AC, ACAD, ADP1, ucsi-source-psy-...). */
const EXTERNAL_TYPES = new Set([
  'mains',
  'usb',
  'usb_c',
  'usb_pd',
  'usb_pd_drp',
  'usb_dcp',
  'usb_cdp',
  'usb_aca',
  'brickid',
  'wireless',
])

/** Groups a `grep . /sys/class/power_supply/*\/*` dump by entry. */
export function powerSupplyEntriesFromDump(text: string): PowerSupplyEntries {
  const entries: PowerSupplyEntries = new Map()
  for (const [path, value] of parseGrepDump(text)) {
    const parts = path.split('/').filter(Boolean)
    const file = parts.at(-1)
    const entry = parts.at(-2)
    if (!file || !entry) continue
    const attributes = entries.get(entry) ?? {}
    attributes[file] = value
    entries.set(entry, attributes)
  }
  return entries
}

/**
 * Decides battery and AC state from every power_supply entry by its `type` and `online`, never by its name.
 * Batteries of peripherals (`scope` = Device: mice, keyboards) are not the machine's battery.
 */
export function summarizePowerSupplies(entries: PowerSupplyEntries): PowerSummary {
  const batteries = [...entries.values()].filter(
    (entry) =>
      entry.type?.toLowerCase() === 'battery' &&
      entry.scope?.toLowerCase() !== 'device' &&
      entry.present !== '0',
  )
  const adapters = [...entries.values()].filter((entry) =>
    EXTERNAL_TYPES.has(entry.type?.toLowerCase() ?? ''),
  )
  let acOnline: boolean | null = adapters.length === 0 ? null : adapters.some((entry) => entry.online === '1')
  const statuses = batteries.map((entry) => entry.status?.toLowerCase() ?? '')
  if (acOnline === null && batteries.length > 0) {
    if (statuses.some((status) => status === 'charging' || status === 'full')) acOnline = true
    else if (statuses.length > 0 && statuses.every((status) => status === 'discharging')) acOnline = false
  }
  const batteryPresent = batteries.length > 0
  return {
    batteryPresent,
    onBattery:
      batteryPresent && (acOnline === false || (acOnline === null && statuses.includes('discharging'))),
    acOnline,
    percent: batteryPercent(batteries),
  }
}

/** Charge across all batteries: by energy (or charge) when the files exist, else the mean of `capacity`. */
function batteryPercent(batteries: Record<string, string>[]): number | null {
  let now = 0
  let full = 0
  for (const battery of batteries) {
    const current = Number(battery.energy_now ?? battery.charge_now)
    const capacity = Number(battery.energy_full ?? battery.charge_full)
    if (!Number.isFinite(current) || !Number.isFinite(capacity) || capacity <= 0) {
      now = Number.NaN
      break
    }
    now += current
    full += capacity
  }
  if (batteries.length > 0 && Number.isFinite(now) && full > 0) return clampPercent((now / full) * 100)
  const capacities = batteries.map((battery) => Number(battery.capacity)).filter(Number.isFinite)
  if (capacities.length === 0) return null
  return clampPercent(capacities.reduce((sum, value) => sum + value, 0) / capacities.length)
}

function clampPercent(value: number): number {
  return Math.round(Math.min(100, Math.max(0, value)) * 10) / 10
}

/** `parsePowerSupplyTree(dump)`: the summary of a recorded `grep . /sys/class/power_supply/*\/*` dump. */
export function parsePowerSupplyTree(text: string): PowerSummary {
  return summarizePowerSupplies(powerSupplyEntriesFromDump(text))
}
