import { describe, expect, it } from 'vitest'
import { SPEED_OFF_PLAN, SpeedWatch } from '../../src/watch/speed-watch.js'

describe('SpeedWatch', () => {
  it('tells once, after warm-up, when the steady speed is more than 30 % off the plan, either way', () => {
    for (const ratio of [0.2, 0.69, 1.31, 5]) {
      const watch = new SpeedWatch(1000)
      // The first report is warm-up: a slow first step alone says nothing.
      expect(watch.observe(10, null)).toBeNull()
      expect(watch.observe(1000 * ratio, 600)).toBeNull()
      expect(watch.observe(1000 * ratio, 500)).toBeNull()
      const found = watch.observe(1000 * ratio, 400)
      expect(found?.details).toEqual({
        plannedTokensPerSecond: 1000,
        measuredTokensPerSecond: 1000 * ratio,
        etaSeconds: 400,
      })
      expect(found?.message).toContain(`${Math.round(1000 * ratio)} tokens/s`)
      expect(found?.message).toContain("the plan's 1000 tokens/s")
      expect(found?.message).toMatch(ratio < 1 ? /below/ : /above/)
      expect(found?.message).toContain('ends in 7 min')
      for (let i = 0; i < 5; i += 1) expect(watch.observe(1000 * ratio, 100)).toBeNull()
    }
  })

  it('stays quiet within 30 %, without a plan, and without speed reports', () => {
    for (const ratio of [1 - SPEED_OFF_PLAN + 0.01, 1, 1 + SPEED_OFF_PLAN - 0.01]) {
      const watch = new SpeedWatch(1000)
      for (let i = 0; i < 10; i += 1) expect(watch.observe(1000 * ratio, null)).toBeNull()
    }
    const noPlan = new SpeedWatch(null)
    const noSpeed = new SpeedWatch(1000)
    for (let i = 0; i < 10; i += 1) {
      expect(noPlan.observe(10, null)).toBeNull()
      expect(noSpeed.observe(null, null)).toBeNull()
    }
  })

  it('reads the median of the steady reports, so one stalled step does not trip it', () => {
    const watch = new SpeedWatch(1000)
    for (const tps of [50, 1000, 100, 1000, 1000]) expect(watch.observe(tps, null)).toBeNull()
  })
})
