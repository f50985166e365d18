import { join } from 'node:path'
import type { MonitorGpuReading } from '@rigfit/core'
import { listEntries, readNumber, readTrimmed } from './read-sysfs.js'

const AMD_PCI_VENDOR = '0x1002'

/** The amdgpu card directories (`class/drm/cardN/device`) under a sysfs root, in card order. */
export function findAmdGpuDevices(sysfsRoot: string): string[] {
  const drm = join(sysfsRoot, 'class', 'drm')
  return listEntries(drm)
    .filter((entry) => /^card\d+$/.test(entry))
    .sort((a, b) => Number(a.slice(4)) - Number(b.slice(4)))
    .map((entry) => join(drm, entry, 'device'))
    .filter(
      (device) =>
        readTrimmed(join(device, 'vendor')) === AMD_PCI_VENDOR &&
        readNumber(join(device, 'mem_info_vram_total')) !== null,
    )
}

/** The device's first hwmon directory (amdgpu exposes exactly one per card). */
function hwmonDir(device: string): string | null {
  const first = listEntries(join(device, 'hwmon')).find((entry) => entry.startsWith('hwmon'))
  return first === undefined ? null : join(device, 'hwmon', first)
}

/**
 * One reading per amdgpu device from sysfs, the same files rocm-smi reads: VRAM in bytes, busy percent,
 * edge temperature in millidegrees, power in microwatts (`power1_average`, or `power1_input` on newer kernels).
 * The index is the card's position among the amdgpu cards found at start, so it stays stable when one drops.
 * Reading files costs far less than spawning rocm-smi each second, which has no loop mode of its own.
 */
export function readAmdGpus(devices: string[]): MonitorGpuReading[] {
  const readings = devices.map((device, index): MonitorGpuReading => {
    const hwmon = hwmonDir(device)
    const fromHwmon = (file: string, scale: number) => {
      if (hwmon === null) return null
      const value = readNumber(join(hwmon, file))
      return value === null ? null : value / scale
    }
    const busy = readNumber(join(device, 'gpu_busy_percent'))
    const productName = readTrimmed(join(device, 'product_name'))
    const deviceId = readTrimmed(join(device, 'device'))
    return {
      index,
      name: productName ?? `AMD GPU ${deviceId ?? 'unknown device'}`,
      vendor: 'amd',
      memoryUsedBytes: readNumber(join(device, 'mem_info_vram_used')),
      memoryTotalBytes: readNumber(join(device, 'mem_info_vram_total')),
      utilizationPercent: busy === null ? null : Math.min(100, Math.max(0, busy)),
      temperatureC: fromHwmon('temp1_input', 1000),
      powerWatts: fromHwmon('power1_average', 1e6) ?? fromHwmon('power1_input', 1e6),
      powerLimitWatts: fromHwmon('power1_cap', 1e6),
    }
  })
  // A card whose files vanished was unplugged or fell off the bus: it is absent, not a card with no memory.
  return readings.filter((reading) => reading.memoryTotalBytes !== null)
}
