import { isRigfitError } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { DEFAULT_MONITOR_OPTIONS, type MonitorOptions, validateMonitorOptions } from '../src/options.js'

const valid: MonitorOptions = {
  ...DEFAULT_MONITOR_OPTIONS,
  command: ['python', 'train.py'],
  cwd: '/',
  env: {},
  overrides: {},
  logDir: '/tmp/x',
  actions: { ...DEFAULT_MONITOR_OPTIONS.actions },
}

function errorOf(options: Partial<MonitorOptions>): string {
  try {
    validateMonitorOptions({ ...valid, ...options })
  } catch (error) {
    if (isRigfitError(error)) return `${error.code} ${error.message}`
    throw error
  }
  return 'valid'
}

describe('validateMonitorOptions', () => {
  it('accepts the defaults and names the flag that is wrong', () => {
    expect(errorOf({})).toBe('valid')
    expect(errorOf({ command: [] })).toMatch(/E_MONITOR_FLAG command/)
    expect(errorOf({ intervalMs: 10 })).toMatch(/--interval-ms/)
    expect(errorOf({ tempHysteresisC: 90 })).toMatch(/--temp-hysteresis.*below --max-temp \(85\)/)
    expect(errorOf({ maxPowerW: 300, powerHysteresisW: 400 })).toMatch(/--power-hysteresis/)
    expect(errorOf({ maxPowerW: 300 })).toBe('valid')
    expect(errorOf({ minBatteryPercent: 120 })).toMatch(/--min-battery/)
    expect(errorOf({ hangMinutes: 0 })).toMatch(/hang-minutes/)
    expect(errorOf({ crashLoopFailures: 1 })).toMatch(/--crash-loop-failures/)
  })
})
