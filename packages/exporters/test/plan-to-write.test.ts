import { planToWrite, type TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { engineOf } from '../src/engine.js'
import { exportPlan } from '../src/export-plan.js'
import { PLAN_FILE } from '../src/formats/rigfit.js'
import { FIXTURE_NAMES, loadFixturePlan } from './helpers/fixture-plans.js'

const NODE_COUNTS = [null, 1, 2, 4] as const

/** The plan file an export wrote, read back as JSON. */
function writtenPlan(files: { path: string; content: string }[], path: string): TrainingPlan {
  const file = files.find((f) => f.path === path)
  if (!file) throw new Error(`${path} is missing from the export`)
  return JSON.parse(file.content) as TrainingPlan
}

/** A plan as its JSON file holds it. */
const asJson = (plan: TrainingPlan | undefined) => JSON.parse(JSON.stringify(plan ?? null))

describe('exports write the plan core finished', () => {
  it('the rigfit and deepspeed exports write what planToWrite returns, for every fixture and node count', () => {
    let compared = 0
    for (const name of FIXTURE_NAMES) {
      const input = loadFixturePlan(name)
      for (const nodes of NODE_COUNTS) {
        if (nodes !== null && nodes > 1 && input.settings.device === 'mps') continue
        for (const format of ['rigfit', 'deepspeed'] as const) {
          const label = `${name} --format ${format} --nodes ${nodes}`
          const finished = planToWrite(input, {
            nodes,
            runsUnderDeepSpeed: (plan) => format === 'deepspeed' || engineOf(plan).kind === 'deepspeed',
          })
          let result: ReturnType<typeof exportPlan>
          try {
            result = exportPlan(input, { format, nodes })
          } catch (error) {
            // A format that cannot express the plan refuses it; the rigfit format expresses every plan.
            expect(format, `${label}: ${error}`).toBe('deepspeed')
            continue
          }
          expect(result.plan, label).toEqual(finished.plan)
          expect(result.warnings.slice(0, finished.warnings.length), label).toEqual(finished.warnings)
          expect(result.streaming, label).toEqual(finished.streaming)
          expect(result.cache, label).toEqual(finished.cache)
          if (format === 'rigfit') {
            expect(writtenPlan(result.files, PLAN_FILE), label).toEqual(asJson(finished.plan))
            // Other node counts than the plan's are a revision: the written plan says so.
            if (nodes !== null && nodes !== input.settings.nodes)
              expect(writtenPlan(result.files, PLAN_FILE).settings.nodes, label).toBe(nodes)
          }
          compared += 1
        }
      }
    }
    expect(compared).toBeGreaterThan(FIXTURE_NAMES.length * 4)
  })

  it('a meta-config writes the phases planToWrite derives, one plan file per phase', () => {
    let split = 0
    for (const name of FIXTURE_NAMES) {
      const input = loadFixturePlan(name)
      let finished: ReturnType<typeof planToWrite>
      try {
        finished = planToWrite(input, { meta: true, runsUnderDeepSpeed: () => false })
      } catch (error) {
        // Plans that cannot be split into phases are refused by core, and so by the export.
        expect(() => exportPlan(input, { format: 'rigfit', meta: true }), name).toThrow(
          String((error as Error).message),
        )
        continue
      }
      const result = exportPlan(input, { format: 'rigfit', meta: true })
      expect(finished.phases, name).not.toBeNull()
      expect(writtenPlan(result.files, `phase-a/${PLAN_FILE}`), name).toEqual(asJson(finished.phases?.phaseA))
      expect(writtenPlan(result.files, `phase-b/${PLAN_FILE}`), name).toEqual(asJson(finished.phases?.phaseB))
      expect(result.meta?.phases, name).toEqual(finished.phases?.phases)
      split += 1
    }
    expect(split).toBeGreaterThan(0)
  })
})
