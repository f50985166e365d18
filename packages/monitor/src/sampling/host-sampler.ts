import type { MonitorBatteryReading } from '@rigfit/core'
import si from 'systeminformation'
import { type CpuTimes, cpuPercentBetween, readBattery, readCpuTimes, readMemInfo } from './host-readings.js'

export interface HostReading {
  cpu: { utilizationPercent: number } | null
  memory: { usedBytes: number; totalBytes: number } | null
  battery: MonitorBatteryReading | null
}

/**
 * CPU, RAM and battery. On Linux it reads /proc and /sys directly (synchronous, microseconds, and rootable
 * for tests); elsewhere it asks systeminformation in the background and answers with the latest values.
 */
export class HostSampler {
  private lastCpu: CpuTimes | null = null
  private latest: HostReading = { cpu: null, memory: null, battery: null }
  private refreshing = false

  constructor(private readonly roots: { procRoot: string; sysfsRoot: string; useProcfs: boolean }) {}

  read(): HostReading {
    if (!this.roots.useProcfs) {
      this.refreshInBackground()
      return this.latest
    }
    const cpuTimes = readCpuTimes(this.roots.procRoot)
    const percent = this.lastCpu && cpuTimes ? cpuPercentBetween(this.lastCpu, cpuTimes) : null
    this.lastCpu = cpuTimes
    return {
      cpu: percent === null ? null : { utilizationPercent: round1(percent) },
      memory: readMemInfo(this.roots.procRoot),
      battery: readBattery(this.roots.sysfsRoot),
    }
  }

  private refreshInBackground(): void {
    if (this.refreshing) return
    this.refreshing = true
    Promise.all([si.currentLoad(), si.mem(), si.battery()])
      .then(([load, mem, battery]) => {
        this.latest = {
          cpu: { utilizationPercent: round1(load.currentLoad) },
          memory: { usedBytes: mem.total - mem.available, totalBytes: mem.total },
          battery: battery.hasBattery
            ? {
                onBattery: !battery.acConnected,
                percent: Number.isFinite(battery.percent) ? battery.percent : null,
              }
            : null,
        }
      })
      .catch(() => {
        // keep the previous values; a failed probe is not worth stopping a training run for
      })
      .finally(() => {
        this.refreshing = false
      })
  }
}

function round1(value: number): number {
  return Math.round(value * 10) / 10
}
