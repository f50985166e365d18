import { join } from 'node:path'
import type { PowerSupplyEntries } from '../parsers/power-supply.js'
import { listDir, readValue } from '../system/read.js'

const ATTRIBUTES = [
  'type',
  'online',
  'status',
  'capacity',
  'present',
  'scope',
  'energy_now',
  'energy_full',
  'charge_now',
  'charge_full',
]

/** Reads every /sys/class/power_supply entry's attributes that decide battery and AC state. */
export async function readPowerSupplyEntries(dir = '/sys/class/power_supply'): Promise<PowerSupplyEntries> {
  const entries: PowerSupplyEntries = new Map()
  for (const name of await listDir(dir)) {
    const values: Record<string, string> = {}
    await Promise.all(
      ATTRIBUTES.map(async (attribute) => {
        const value = await readValue(join(dir, name, attribute))
        if (value !== null) values[attribute] = value
      }),
    )
    entries.set(name, values)
  }
  return entries
}
