import { describe, expect, it } from 'vitest'
import { PauseState } from '../../src/watch/pause-state.js'

describe('PauseState', () => {
  it('pauses on the first reason, resumes after the last, and counts the paused time', () => {
    const pause = new PauseState()
    expect(pause.add('temperature', 'hot', 1000)).toBe(true)
    expect(pause.add('battery', 'low', 1500)).toBe(false)
    expect(pause.remove('temperature', 2000)).toBe('still-paused')
    expect(pause.why()).toEqual(['low'])
    expect(pause.remove('temperature', 2000)).toBeNull()
    expect(pause.remove('battery', 4000)).toBe('resumed')
    expect(pause.paused).toBe(false)
    expect(pause.pausedMs(9000)).toBe(3000)
    pause.add('power', 'draw', 10_000)
    expect(pause.pausedMs(10_500)).toBe(3500)
    pause.clear(11_000)
    expect(pause.paused).toBe(false)
    expect(pause.pausedMs(20_000)).toBe(4000)
  })
})
