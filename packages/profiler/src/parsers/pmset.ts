import type { PowerSummary } from './power-supply.js'

/** Parses `pmset -g batt` (macOS): "Now drawing from 'AC Power'" and "-InternalBattery-0 ... 87%; charging". */
export function parsePmsetBattery(text: string): PowerSummary {
  const source = /drawing from '([^']+)'/.exec(text)?.[1] ?? null
  const battery = /InternalBattery[^\n]*?(\d{1,3})%/.exec(text)
  const acOnline = source === null ? null : /AC Power/i.test(source)
  return {
    batteryPresent: battery !== null,
    onBattery: battery !== null && acOnline === false,
    acOnline,
    percent: battery ? Math.min(100, Number(battery[1])) : null,
  }
}
