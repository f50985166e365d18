import type { FuzzResult, FuzzTarget } from './harness.js'
import { fuzzReport, fuzzSettings, fuzzTimeoutMs, runTarget } from './suite.js'

/** The parts of the test runner a suite uses (vitest's), passed in so that the kit depends on no runner. */
export interface SuiteRunner {
  describe: (name: string, body: () => void) => void
  it: (name: string, body: () => void, timeoutMs?: number) => void
  expect: (value: unknown) => { toBe(expected: unknown): void; toEqual(expected: unknown): void }
  afterAll: (body: () => void) => void
}

/**
 * One test per target: every input run, no crash, no violation; the figures printed after the suite under
 * `pnpm fuzz` (`what` names a target in the table: "parser", "reader").
 */
export function describeFuzzTargets(
  runner: SuiteRunner,
  title: string,
  targets: FuzzTarget[],
  what: string,
): void {
  const { runs, report } = fuzzSettings()
  const results: FuzzResult[] = []
  runner.describe(title, () => {
    for (const target of targets) {
      runner.it(
        `${target.name}: no crash, nothing out of range accepted`,
        () => {
          const result = runTarget(target, results)
          runner.expect(result.inputs).toBe(runs)
          runner.expect(result.crashes).toEqual([])
          runner.expect(result.violations).toEqual([])
        },
        fuzzTimeoutMs(runs),
      )
    }
    runner.afterAll(() => {
      if (report) console.log(fuzzReport(results, what))
    })
  })
}
