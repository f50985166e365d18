import { describe, expect, it } from 'vitest'
import { planProblems } from './plan-checks.js'
import { MODES, NODES, planFor, type SweptMachine, WORKS, workloadOf } from './plan-space.js'

/** The figures of one sweep: plans checked, combinations where nothing fits, and every failing plan. */
export interface SweepResult {
  plans: number
  unfit: number
  failures: string[]
}

/** Plans every machine x workload x mode x node count as `rigfit plan` does and checks each plan. */
export async function sweep(machines: SweptMachine[]): Promise<SweepResult> {
  const result: SweepResult = { plans: 0, unfit: 0, failures: [] }
  for (const machine of machines) {
    for (const work of WORKS) {
      for (const mode of MODES) {
        for (const nodes of NODES) {
          const label = `${machine.label} ${work.model ?? 'pretrain'} ${work.method} --mode ${mode} --nodes ${nodes}`
          try {
            const plan = await planFor(machine.profile, workloadOf(work, nodes), mode)
            if (!plan) {
              result.unfit += 1
              continue
            }
            result.plans += 1
            const problems = planProblems(plan, machine.profile)
            if (problems.length > 0) result.failures.push(`${label}: ${problems.join('; ')}`)
          } catch (error) {
            result.failures.push(`${label}: planning threw ${error instanceof Error ? error.message : error}`)
          }
        }
      }
    }
  }
  return result
}

/**
 * A deadline that catches a hang, not a speed check: a file's sweep takes a minute or two on an idle 2-core machine
 * and several times that while other processes keep the cores busy.
 */
const SWEEP_DEADLINE_MS = 1_800_000

/** One test file's sweep: plans the machines, prints the figures once, and lists every failing plan. */
export function describeSweep(name: string, machines: () => SweptMachine[]): void {
  describe(`plan space: ${name}`, () => {
    it(
      'every plan exports in every format as planned, explains and re-estimates to itself',
      async () => {
        const result = await sweep(machines())
        console.log(
          `plan space ${name}: ${result.plans} plans, ${result.unfit} combinations where nothing fits, ${result.failures.length} failures`,
        )
        expect(result.failures).toEqual([])
        expect(result.plans).toBeGreaterThan(0)
      },
      SWEEP_DEADLINE_MS,
    )
  })
}
