import { TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { checkPlan } from '../src/check-plan.js'
import { buildPlan, FIXTURE_NAMES, fixturePath, loadFixturePlan, PLAN_RECIPES } from './helpers/build-plan.js'

describe('fixture plans', () => {
  it.each(FIXTURE_NAMES)(
    '%s is the helper output, a valid TrainingPlan and self-consistent',
    async (name) => {
      const plan = buildPlan(PLAN_RECIPES[name] as (typeof PLAN_RECIPES)[string])
      await expect(`${JSON.stringify(plan, null, 2)}\n`).toMatchFileSnapshot(fixturePath(name))
      expect(TrainingPlan.safeParse(loadFixturePlan(name)).success).toBe(true)
      expect(checkPlan(plan)).toEqual([])
    },
  )
})
