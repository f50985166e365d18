import type { MonitorGpuReading } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { LimitWatch } from '../../src/watch/limit-watch.js'

const gpu = (
  index: number,
  temperatureC: number | null,
  powerWatts: number | null = 300,
): MonitorGpuReading => ({
  index,
  name: 'NVIDIA GeForce RTX 3090',
  vendor: 'nvidia',
  memoryUsedBytes: null,
  memoryTotalBytes: null,
  utilizationPercent: null,
  temperatureC,
  powerWatts,
  powerLimitWatts: 350,
})
const limits = {
  maxTempC: 85,
  tempHysteresisC: 10,
  maxPowerW: null,
  powerHysteresisW: null,
  minBatteryPercent: 20,
}

describe('LimitWatch', () => {
  it('pauses on the hottest GPU and resumes below the hysteresis, naming the device', () => {
    const watch = new LimitWatch(limits)
    expect(watch.update([gpu(0, 70), gpu(1, 84)], null).events).toEqual([])
    const [close] = watch.update([gpu(0, 70), gpu(1, 87)], null).events
    expect(close).toMatchObject({
      cause: 'temperature',
      transition: 'close',
      details: { device: 'GPU1', temperatureC: 87 },
    })
    expect(close?.reason).toBe('GPU1 at 87°C is above --max-temp 85°C')
    expect(watch.update([gpu(0, 70), gpu(1, 76)], null).events).toEqual([])
    expect(watch.update([gpu(0, 70), gpu(1, 74)], null).events[0]).toMatchObject({ transition: 'open' })
  })

  it('pauses on total GPU power only when it stays above --max-power', () => {
    const watch = new LimitWatch({ ...limits, maxPowerW: 500 })
    expect(watch.powerHysteresisW).toBe(50)
    const two = (w: number) => [gpu(0, 60, w), gpu(1, 60, w)]
    expect(watch.update(two(260), null).events).toEqual([])
    expect(watch.update(two(260), null).events).toEqual([])
    expect(watch.update(two(260), null).events[0]).toMatchObject({
      cause: 'power',
      transition: 'close',
      details: { powerWatts: 520 },
    })
    expect(watch.update(two(230), null).events).toEqual([])
    expect(watch.update(two(220), null).events[0]).toMatchObject({ cause: 'power', transition: 'open' })
  })

  it('warns once on battery, pauses below --min-battery, resumes on AC', () => {
    const watch = new LimitWatch(limits)
    expect(watch.update([], { onBattery: false, percent: 80 })).toEqual({ events: [], wentOnBattery: null })
    expect(watch.update([], { onBattery: true, percent: 50 }).wentOnBattery).toEqual({
      onBattery: true,
      percent: 50,
    })
    expect(watch.update([], { onBattery: true, percent: 40 }).wentOnBattery).toBeNull()
    expect(watch.update([], { onBattery: true, percent: 19 }).events[0]).toMatchObject({
      cause: 'battery',
      transition: 'close',
    })
    expect(watch.update([], { onBattery: true, percent: 18 }).events).toEqual([])
    expect(watch.update([], { onBattery: false, percent: 18 }).events[0]).toMatchObject({
      cause: 'battery',
      transition: 'open',
    })
  })
})
