import { type FuzzResult, type FuzzTarget, fuzz } from './harness.js'

/**
 * How many inputs a fuzz suite feeds each target, from which seed, and whether it prints its figures: 2,000 from
 * a fixed seed in the normal test run; `pnpm fuzz` sets RIGFIT_FUZZ_RUNS (100,000) and RIGFIT_FUZZ_REPORT=1, and
 * RIGFIT_FUZZ_SEED picks another seed.
 */
export function fuzzSettings(env: NodeJS.ProcessEnv = process.env): {
  runs: number
  seed: number
  report: boolean
} {
  return {
    runs: Number(env.RIGFIT_FUZZ_RUNS ?? 2000),
    seed: Number(env.RIGFIT_FUZZ_SEED ?? 20_250_616),
    report: env.RIGFIT_FUZZ_REPORT === '1',
  }
}

/** A time limit for a hang, not an assertion on speed: 100,000 inputs take seconds per target. */
export function fuzzTimeoutMs(runs: number): number {
  return Math.max(60_000, runs * 5)
}

/** Runs one target and keeps its result for the report. */
export function runTarget(target: FuzzTarget, results: FuzzResult[]): FuzzResult {
  const { runs, seed } = fuzzSettings()
  const result = fuzz(target, runs, seed)
  results.push(result)
  return result
}

/** The figures of a suite as a table: inputs, crashes, violations and the slowest input of each target. */
export function fuzzReport(results: FuzzResult[], what: string): string {
  const { runs, seed } = fuzzSettings()
  const width = Math.max(what.length, ...results.map((result) => result.name.length))
  const lines = results.map(
    (result) =>
      `${result.name.padEnd(width)}  ${String(result.inputs).padStart(8)}  ${String(result.crashCount).padStart(7)}  ${String(result.violationCount).padStart(10)}  ${result.slowestMs.toFixed(2).padStart(9)} ms  (${result.slowestLength} chars)`,
  )
  return [
    `seed ${seed}, ${runs} inputs per ${what}`,
    `${what.padEnd(width)}  ${'inputs'.padStart(8)}  ${'crashes'.padStart(7)}  ${'violations'.padStart(10)}  ${'slowest'.padStart(12)}`,
    ...lines,
  ].join('\n')
}
