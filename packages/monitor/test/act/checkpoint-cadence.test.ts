import { describe, expect, it } from 'vitest'
import { checkpointCadence } from '../../src/act/checkpoint-cadence.js'

describe('checkpointCadence', () => {
  it("keeps the plan's interval while nothing failed, in steps when the step time is known", () => {
    const advice = checkpointCadence({
      stepSeconds: 2,
      failures: 0,
      runSeconds: 3600,
      checkpointSeconds: null,
      planIntervalMinutes: 30,
    })
    expect(advice.intervalMinutes).toBe(30)
    expect(advice.intervalSteps).toBe(900)
    expect(advice.message).toMatch(/every 900 steps.*no failure seen.*assuming a save takes ~60 s/)
  })

  it("shortens it with Young's formula as failures come in", () => {
    // two failures in 4 h: MTBF 2 h; a save of 30 s; sqrt(2 * 30 * 7200) = 657 s
    const advice = checkpointCadence({
      stepSeconds: 1.5,
      failures: 2,
      runSeconds: 4 * 3600,
      checkpointSeconds: 30,
      planIntervalMinutes: 30,
    })
    expect(advice.intervalMinutes * 60).toBeCloseTo(Math.sqrt(2 * 30 * 7200), 6)
    expect(advice.intervalSteps).toBe(Math.round(Math.sqrt(2 * 30 * 7200) / 1.5))
    expect(advice.message).toMatch(/2 failures.*a save takes 30 s/)
  })

  it('never asks for saves closer than twice their cost', () => {
    const advice = checkpointCadence({
      stepSeconds: null,
      failures: 5,
      runSeconds: 60,
      checkpointSeconds: 90,
      planIntervalMinutes: null,
    })
    expect(advice.intervalMinutes * 60).toBe(180)
    expect(advice.intervalSteps).toBeNull()
  })

  it('keeps out-of-memory failures out of the failure rate: they come from the settings, not from chance', () => {
    for (const oomFailures of [1, 2, 5]) {
      const advice = checkpointCadence({
        stepSeconds: null,
        failures: 0,
        oomFailures,
        runSeconds: 1,
        checkpointSeconds: null,
        planIntervalMinutes: 20,
      })
      expect(advice.intervalMinutes).toBe(20)
      expect(advice.basis).toMatchObject({ failures: 0, oomFailures, mtbfSeconds: null })
      expect(advice.message).toMatch(new RegExp(`no failure seen \\(${oomFailures} out-of-memory`))
    }
  })
})
