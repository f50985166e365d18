import fc from 'fast-check'

/** One parser or loader under fuzzing: how its inputs are made, and what any answer of it must satisfy. */
export interface FuzzTarget {
  name: string
  input: fc.Arbitrary<string>
  /** Throws only on a crash: a loader's typed refusal of bad input is an answer, returned as such. */
  parse: (text: string) => unknown
  /** Throws when the answer breaks a guarantee. */
  check: (answer: unknown) => void
}

export interface FuzzFinding {
  /** The start of the input, escaped, and its length: enough to reproduce with the seed. */
  input: string
  error: string
}

export interface FuzzResult {
  name: string
  inputs: number
  crashCount: number
  violationCount: number
  /** The parser threw (the first few). */
  crashes: FuzzFinding[]
  /** The first few answers of its guarantees rule out (a value out of range, a repeated GPU). */
  violations: FuzzFinding[]
  /**
   * The longest a single parse took, in ms (the fastest of three timings of that input), and the size of that
   * input. Printed, never asserted.
   */
  slowestMs: number
  slowestLength: number
}

const KEPT_FINDINGS = 5

function finding(input: string, error: unknown): FuzzFinding {
  const message = error instanceof Error ? error.message : String(error)
  return {
    input: `${JSON.stringify(input.slice(0, 160))} (${input.length} chars)`,
    error: message.slice(0, 600),
  }
}

function timeOf(target: FuzzTarget, input: string): number {
  const started = performance.now()
  target.parse(input)
  return performance.now() - started
}

/**
 * Feeds `runs` generated inputs (from `seed`, so a run can be repeated) to one parser, and counts instead of
 * stopping at the first failure, so that one run reports every kind of finding.
 */
export function fuzz(target: FuzzTarget, runs: number, seed: number): FuzzResult {
  const result: FuzzResult = {
    name: target.name,
    inputs: 0,
    crashCount: 0,
    violationCount: 0,
    crashes: [],
    violations: [],
    slowestMs: 0,
    slowestLength: 0,
  }
  fc.check(
    fc.property(target.input, (input) => {
      result.inputs += 1
      const started = performance.now()
      let answer: unknown
      try {
        answer = target.parse(input)
      } catch (error) {
        if (result.crashCount++ < KEPT_FINDINGS) result.crashes.push(finding(input, error))
        return true
      }
      const ms = performance.now() - started
      if (ms > result.slowestMs) {
        // A candidate for the slowest is timed twice more and the fastest kept: a garbage collection or the
        // scheduler (other processes on the machine) should not pass for the parser's own time.
        const fastest = Math.min(ms, timeOf(target, input), timeOf(target, input))
        if (fastest > result.slowestMs) {
          result.slowestMs = fastest
          result.slowestLength = input.length
        }
      }
      try {
        target.check(answer)
      } catch (error) {
        if (result.violationCount++ < KEPT_FINDINGS) result.violations.push(finding(input, error))
      }
      return true
    }),
    { numRuns: runs, seed },
  )
  return result
}
