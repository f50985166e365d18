import { describe, expect, it } from 'vitest'
import { catalog, describePlan, GPU_COUNTS, jobs, planCache, rate } from './space.js'

/**
 * Properties of the plan space, through the planner the CLI runs (bundled catalogs and packs). The full product
 * is 72 catalog GPUs x 4 counts x 43 models x 4 methods x 3 modes (about 148k plans at ~0.1 s each), too much for
 * CI: every 86th job of models x methods x modes (6 jobs covering every mode and method) runs on every catalog
 * GPU that comes several to a machine, at 1, 2, 4 and 8 of them.
 */
const SAMPLE = jobs().sample(86)

/**
 * The planner counts speeds within 2 % as equal and takes the simpler setup among them (rank.ts); a bigger
 * machine may so plan a simpler setup up to that much slower by the estimate, never more.
 */
const SPEED_RESOLUTION = 0.02

const { planned, size } = planCache()

describe('the plan space', () => {
  it('is monotone in count: more GPUs of one kind never slow a data-parallel plan', async () => {
    const failures: string[] = []
    let compared = 0
    for (const entry of catalog.filter((e) => !e.unifiedMemory)) {
      for (const job of SAMPLE) {
        for (let i = 0; i + 1 < GPU_COUNTS.length; i += 1) {
          const [n, more] = [GPU_COUNTS[i] as number, GPU_COUNTS[i + 1] as number]
          const [few, many] = [await planned(entry, n, job), await planned(entry, more, job)]
          if (!few) continue
          compared += 1
          if (!many) failures.push(`${job.label} ${entry.id}: x${n} plans, x${more} does not`)
          else if (rate(many) < rate(few) * (1 - SPEED_RESOLUTION))
            failures.push(
              `${job.label} ${entry.id}: x${more} ${describePlan(many)} < x${n} ${describePlan(few)}`,
            )
        }
      }
    }
    console.log(`count: ${compared} comparisons, ${size()} plans`)
    expect(failures).toEqual([])
    expect(compared).toBeGreaterThan(500)
  }, 900_000)
})
