import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  cpuPercentBetween,
  readBattery,
  readCpuTimes,
  readMemInfo,
} from '../../src/sampling/host-readings.js'

const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url))

describe('host readings', () => {
  it('computes CPU utilisation between two /proc/stat readings of a Ryzen 7950X', () => {
    const t0 = readCpuTimes(fixture('proc/ryzen-7950x-t0'))
    const t1 = readCpuTimes(fixture('proc/ryzen-7950x-t1'))
    expect(t0).not.toBeNull()
    // +800 user, +200 system, +800 idle jiffies
    expect(cpuPercentBetween(t0 as NonNullable<typeof t0>, t1 as NonNullable<typeof t1>)).toBeCloseTo(
      55.56,
      1,
    )
  })

  it('reads RAM use as total minus available', () => {
    expect(readMemInfo(fixture('proc/ryzen-7950x-t0'))).toEqual({
      totalBytes: 65536000 * 1024,
      usedBytes: (65536000 - 41958212) * 1024,
    })
    expect(readMemInfo(fixture('proc/no-such-machine'))).toBeNull()
  })

  it('reads the system battery, skipping a mouse, and whether the charger is plugged in', () => {
    expect(readBattery(fixture('sysfs/thinkpad-t14s-on-battery'))).toEqual({ onBattery: true, percent: 42 })
    expect(readBattery(fixture('sysfs/framework13-charging'))).toEqual({ onBattery: false, percent: 77 })
    expect(readBattery(fixture('sysfs/rx7900xtx-workstation'))).toBeNull()
  })
})
