import { describe, expect, it } from 'vitest'
import {
  assumedSocWatts,
  estimateCpuPackageWatts,
  estimatePower,
  gpuCoresFromName,
  type PowerInput,
} from '../../src/plan/power.js'

const desktop: PowerInput = {
  deviceTdpWatts: [450],
  devicePowerLimitWatts: [null],
  tdpFraction: 0.95,
  physicalCores: 16,
  cpuOnly: false,
  hours: 10,
  psuWatts: 750,
}

describe('estimatePower', () => {
  it('never draws more than a power limit allows, however high the TDP', () => {
    const limited = { ...desktop, devicePowerLimitWatts: [300] }
    const at450 = estimatePower(limited).watts
    expect(estimatePower({ ...limited, deviceTdpWatts: [600] }).watts).toBe(at450)
    expect(at450).toBeLessThan(estimatePower(desktop).watts)
  })

  it('draws more in a mode with a larger share of TDP, and never more than the parts can', () => {
    let previous = 0
    for (const tdpFraction of [0.5, 0.7, 0.85, 0.95, 1]) {
      const power = estimatePower({ ...desktop, tdpFraction })
      expect(power.watts).toBeGreaterThanOrEqual(previous)
      expect(power.tdpFraction).toBeLessThanOrEqual(1)
      previous = power.watts
    }
  })

  it('adds each GPU, so two cards draw more than one', () => {
    const one = estimatePower(desktop).watts
    const two = estimatePower({ ...desktop, deviceTdpWatts: [450, 450], devicePowerLimitWatts: [null, null] })
    expect(two.watts).toBeGreaterThan(one)
  })

  it('turns watts over the run into energy', () => {
    const short = estimatePower({ ...desktop, hours: 1 })
    const long = estimatePower({ ...desktop, hours: 10 })
    expect(long.watts).toBe(short.watts)
    expect(long.energyKWh).toBeCloseTo(10 * short.energyKWh)
  })

  it('shrinks the PSU headroom watt for watt as the GPU TDP grows, goes negative on a small PSU, and is null without one', () => {
    const headroom = (deviceTdpWatts: number[], psuWatts: number | null) =>
      estimatePower({ ...desktop, deviceTdpWatts, psuWatts }).psuHeadroomWatts
    expect((headroom([350], 750) ?? 0) - (headroom([450], 750) ?? 0)).toBe(100)
    expect(headroom([450], 500)).toBeLessThan(0)
    expect(headroom([450], null)).toBeNull()
  })

  it('counts a unified-memory chip once: no CPU package on top of the SoC figure', () => {
    const soc = { ...desktop, deviceTdpWatts: [60], unifiedMemory: true, psuWatts: null }
    const asDiscrete = estimatePower({ ...soc, unifiedMemory: false }).watts
    expect(estimatePower(soc).watts).toBeLessThan(asDiscrete)
    expect(estimatePower(soc).watts).toBeLessThanOrEqual(60)
  })

  it('runs the CPU harder when it trains alone than when it feeds GPUs', () => {
    const cpuOnly = estimatePower({
      ...desktop,
      deviceTdpWatts: [],
      devicePowerLimitWatts: [],
      cpuOnly: true,
    })
    const feeding = estimatePower({ ...desktop, deviceTdpWatts: [], devicePowerLimitWatts: [] })
    expect(cpuOnly.watts).toBeGreaterThan(feeding.watts)
    expect(cpuOnly.watts).toBeLessThanOrEqual(estimateCpuPackageWatts(desktop.physicalCores))
  })
})

describe('estimateCpuPackageWatts', () => {
  it('grows with the cores, with a floor for small CPUs', () => {
    expect(estimateCpuPackageWatts(32)).toBeGreaterThan(estimateCpuPackageWatts(16))
    expect(estimateCpuPackageWatts(1)).toBe(estimateCpuPackageWatts(0))
    expect(estimateCpuPackageWatts(1)).toBeGreaterThan(0)
  })
})

describe('Apple chips without a published figure', () => {
  it('reads the GPU cores from the catalog name, and assumes more power for more cores', () => {
    expect(gpuCoresFromName('Apple M2 Pro (19-core GPU)')).toBe(19)
    expect(gpuCoresFromName('Apple M2')).toBeNull()
    expect(assumedSocWatts(32)).toBeGreaterThan(assumedSocWatts(10))
  })

  it('assumes no less than what Apple publishes for these chips', () => {
    // Apple's published maximums: M1 8-core GPU 39 W, M2 10-core 50 W, M4 10-core 65 W, M1 Max 32-core 115 W.
    for (const [cores, published] of [
      [8, 39],
      [10, 65],
      [32, 115],
      [30, 145],
    ] as const)
      expect(assumedSocWatts(cores), `${cores}-core GPU`).toBeGreaterThanOrEqual(published)
  })
})
