import { describe, expect, it } from 'vitest'
import { HysteresisGate } from '../../src/act/hysteresis-gate.js'

describe('HysteresisGate', () => {
  it('closes above the limit and opens only below the lower threshold', () => {
    const gate = new HysteresisGate(85, 75)
    expect([80, 85, 86, 84, 75, 74, 80].map((t) => gate.update(t))).toEqual([
      null,
      null,
      'close',
      null,
      null,
      'open',
      null,
    ])
  })

  it('needs sustained readings when asked, and ignores unknown ones', () => {
    const gate = new HysteresisGate(300, 270, 3)
    expect([320, 250, 320, 320, null, 320, 260].map((w) => gate.update(w))).toEqual([
      null,
      null,
      null,
      null,
      null,
      'close',
      'open',
    ])
  })
})
