import { checkPlan, TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { FIXTURE_NAMES, FIXTURE_RECIPES, fixturePath, loadFixturePlan } from './helpers/fixture-plans.js'
import { plannerPlan } from './helpers/planner-plan.js'

describe('fixture plans', () => {
  it.each(FIXTURE_NAMES)(
    '%s is what the planner writes for its recipe, valid and self-consistent',
    async (name) => {
      const { recipe, shape } = FIXTURE_RECIPES[name] as (typeof FIXTURE_RECIPES)[string]
      const plan = await plannerPlan(recipe)
      await expect(`${JSON.stringify(plan, null, 2)}\n`).toMatchFileSnapshot(fixturePath(name))
      expect(TrainingPlan.safeParse(loadFixturePlan(name)).success).toBe(true)
      expect(checkPlan(plan)).toEqual([])
      // The name promises a shape; a planner that stops producing it needs a new recipe, not a silent rename.
      expect(plan.settings).toMatchObject(shape)
    },
  )
})
