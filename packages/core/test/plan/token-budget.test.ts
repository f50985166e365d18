import { describe, expect, it } from 'vitest'
import { tokenBudget } from '../../src/plan/token-budget.js'

describe('tokenBudget', () => {
  it('is Chinchilla when time allows, and reports the time budget when it binds', () => {
    const free = tokenBudget({
      params: 100e6,
      tokensPerParam: 20,
      tokensPerSecond: 1e6,
      maxHours: 6,
      datasetTokens: null,
    })
    expect(free).toMatchObject({ budget: 2e9, binding: 'chinchilla', tokensPerParam: 20 })
    const bound = tokenBudget({
      params: 100e6,
      tokensPerParam: 20,
      tokensPerSecond: 1e4,
      maxHours: 2,
      datasetTokens: null,
    })
    expect(bound.binding).toBe('time-budget')
    expect(bound.budget).toBe(1e4 * 2 * 3600)
  })
  it('takes the dataset as the budget for fine-tuning unless time is shorter', () => {
    expect(
      tokenBudget({
        params: 7e9,
        tokensPerParam: 20,
        tokensPerSecond: 1e4,
        maxHours: 100,
        datasetTokens: 5e8,
      }).binding,
    ).toBe('dataset')
  })
})

describe('tokenBudget in whole optimizer steps', () => {
  const base = { params: 124e6, tokensPerParam: 20, tokensPerSecond: 2e5, maxHours: 6 }
  it('rounds the budget down to whole steps, and says when even one step is more than the bound', () => {
    const budget = tokenBudget({ ...base, kind: 'pretrain', datasetTokens: null, tokensPerStep: 1_000_000 })
    expect(budget.binding).toBe('chinchilla')
    expect(budget.steps).toBe(Math.floor((124e6 * 20) / 1e6))
    expect(budget.budget).toBe((budget.steps ?? 0) * 1_000_000)
    expect(budget.oneStepOverBound).toBe(false)
    // --target-batch 1000000 at 2048 tokens is 2.05B tokens per step, more than the 0.36B a 1 h budget allows at
    // 1e5 tokens/s: the plan trains that one whole step and says so.
    const huge = tokenBudget({
      ...base,
      tokensPerSecond: 1e5,
      maxHours: 1,
      kind: 'pretrain',
      datasetTokens: null,
      tokensPerStep: 1_000_000 * 2048,
    })
    expect(huge).toMatchObject({
      steps: 1,
      budget: 2_048_000_000,
      oneStepOverBound: true,
      binding: 'time-budget',
    })
  })

  it('does not call a fine-tune without a dataset size bound by the dataset', () => {
    const budget = tokenBudget({ ...base, kind: 'finetune', datasetTokens: null, tokensPerStep: 65_536 })
    expect(budget.binding).toBe('time-budget')
    expect(budget.budget).toBeLessThanOrEqual(2e5 * 6 * 3600)
    const withData = tokenBudget({ ...base, kind: 'finetune', datasetTokens: 50e6, tokensPerStep: 65_536 })
    expect(withData.binding).toBe('dataset')
    expect(withData.epochs).toBeLessThanOrEqual(1)
  })

  it('caps pretraining at four passes over a small dataset', () => {
    const budget = tokenBudget({
      ...base,
      maxHours: 1000,
      kind: 'pretrain',
      datasetTokens: 100e6,
      tokensPerStep: 65_536,
    })
    expect(budget.binding).toBe('dataset')
    expect(budget.budget).toBeLessThanOrEqual(4 * 100e6)
    expect(budget.epochs).toBeGreaterThan(3.9)
  })
})
