import { describe, expect, it } from 'vitest'
import { TrainingProgress } from '../../src/metrics/training-progress.js'

const basis = { effectiveBatch: 16, seq: 1024, totalStepsOverride: null, totalStepsFromPlan: 1000 }

describe('TrainingProgress', () => {
  it('measures step time, samples/s and ETA on the active clock', () => {
    const p = new TrainingProgress(basis)
    p.update({ step: 10, loss: 3 }, false, 100)
    p.update({ step: 20, loss: 2.5 }, false, 120)
    const s = p.snapshot()
    expect(s.stepSeconds).toBe(2)
    expect(s.samplesPerSecond).toBe(8)
    expect(s.tokensPerSecond).toBe(8 * 1024)
    expect(s.totalSteps).toBe(1000)
    expect(s.etaSeconds).toBe(980 * 2)
    expect(s.loss).toBe(2.5)
  })

  it('prefers reported token counts and never mixes them with the plan-derived rate', () => {
    const p = new TrainingProgress(basis)
    p.update({ step: 1, tokens: 1000 }, false, 0)
    expect(p.snapshot().tokensPerSecond).toBeNull()
    p.update({ step: 2, tokens: 3000 }, false, 2)
    expect(p.snapshot().tokensPerSecond).toBe(1000)
  })

  it('lets --total-steps win and follows the first tqdm bar only', () => {
    const p = new TrainingProgress({ ...basis, totalStepsOverride: 50 })
    p.update({ step: 5, totalSteps: 200 }, true, 1)
    expect(p.snapshot().totalSteps).toBe(50)
    expect(p.update({ step: 3, totalSteps: 40 }, true, 2)).toBeNull()
    expect(p.snapshot().step).toBe(5)
  })

  it('reports whether a line changed anything, and restarts its windows on a new attempt', () => {
    const p = new TrainingProgress(basis)
    expect(p.update({ step: 4, loss: 2 }, false, 0)).toEqual({ stepAdvanced: true, changed: true })
    expect(p.update({ step: 4 }, false, 1)).toEqual({ stepAdvanced: false, changed: false })
    p.update({ step: 6 }, false, 2)
    p.startAttempt()
    p.update({ step: 5 }, false, 50)
    expect(p.snapshot().stepSeconds).toBeNull()
    p.update({ step: 6 }, false, 51)
    expect(p.snapshot().stepSeconds).toBe(1)
  })
})
