import { join } from 'node:path'
import type { MonitorBatteryReading } from '@rigfit/core'
import { listEntries, readNumber, readTrimmed } from './read-sysfs.js'

export interface CpuTimes {
  busy: number
  total: number
}

/** Aggregate CPU jiffies from the first line of /proc/stat; busy excludes idle and iowait. */
export function readCpuTimes(procRoot: string): CpuTimes | null {
  const stat = readTrimmed(join(procRoot, 'stat'))
  const line = stat?.split('\n', 1)[0]
  if (!line?.startsWith('cpu ')) return null
  const fields = line.trim().split(/\s+/).slice(1).map(Number)
  if (fields.length < 4 || fields.some((value) => !Number.isFinite(value))) return null
  // user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0)
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
  return { busy: total - idle, total }
}

/** CPU utilisation between two readings, in percent of all cores. */
export function cpuPercentBetween(before: CpuTimes, after: CpuTimes): number | null {
  const total = after.total - before.total
  if (total <= 0) return null
  return Math.min(100, Math.max(0, ((after.busy - before.busy) / total) * 100))
}

/** Used and total RAM from /proc/meminfo: used is what is not available (page cache counts as free). */
export function readMemInfo(procRoot: string): { usedBytes: number; totalBytes: number } | null {
  const text = readTrimmed(join(procRoot, 'meminfo'))
  if (text === null) return null
  const kib = (key: string) => {
    const match = new RegExp(`^${key}:\\s+(\\d+)\\s*kB`, 'm').exec(text)
    return match ? Number(match[1]) * 1024 : null
  }
  const total = kib('MemTotal')
  const available = kib('MemAvailable') ?? kib('MemFree')
  if (total === null || available === null) return null
  return { usedBytes: Math.max(0, total - available), totalBytes: total }
}

/**
 * Battery state from /sys/class/power_supply: a system battery (not a mouse's: scope "Device" is skipped)
 * and whether any mains/USB supply is online. Null when the machine has no battery.
 */
export function readBattery(sysfsRoot: string): MonitorBatteryReading | null {
  const root = join(sysfsRoot, 'class', 'power_supply')
  let percent: number | null = null
  let hasBattery = false
  let discharging = false
  let mainsSeen = false
  let mainsOnline = false
  for (const entry of listEntries(root)) {
    const dir = join(root, entry)
    const type = readTrimmed(join(dir, 'type'))
    if (type === 'Battery') {
      if (readTrimmed(join(dir, 'scope')) === 'Device' || readNumber(join(dir, 'present')) === 0) continue
      hasBattery = true
      percent ??= readNumber(join(dir, 'capacity'))
      if (readTrimmed(join(dir, 'status')) === 'Discharging') discharging = true
    } else if (type === 'Mains' || type === 'USB' || type === 'USB_C' || type === 'USB_PD') {
      mainsSeen = true
      if (readNumber(join(dir, 'online')) === 1) mainsOnline = true
    }
  }
  if (!hasBattery) return null
  const onBattery = mainsSeen ? !mainsOnline : discharging
  return { onBattery, percent: percent === null ? null : Math.min(100, Math.max(0, percent)) }
}
