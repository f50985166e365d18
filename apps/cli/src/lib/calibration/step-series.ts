/** One optimizer step the trainer reported. */
export interface StepSample {
  step: number
  tokensPerSecond: number
  /** Peak device memory the trainer reported with it (null on a CPU). */
  maxMemoryAllocated: number | null
  maxMemoryReserved: number | null
}

export interface SeriesFigures {
  /** Tokens over seconds of the timed steps (after warm-up). */
  tokensPerSecond: number
  stepSeconds: number
  steps: number
  seconds: number
}

/** Timed steps before a figure is called stable, and the relative standard error it must be under. */
const MIN_STABLE_STEPS = 5
const STABLE_ERROR = 0.015

/**
 * The timed steps of a measurement: the first `warmup` steps are dropped (allocation, autotuning, caches), steps
 * that saved a checkpoint are never given (the trainer times them apart). The speed is tokens over seconds, so a
 * slow step weighs by its time, not as one rate among many.
 */
export class StepSeries {
  private readonly times: number[] = []
  private seen = 0

  constructor(
    private readonly tokensPerStep: number,
    private readonly warmup: number,
  ) {}

  /** Adds a step; answers whether it was timed (past warm-up). */
  add(sample: StepSample): boolean {
    this.seen += 1
    if (this.seen <= this.warmup || sample.tokensPerSecond <= 0) return false
    this.times.push(this.tokensPerStep / sample.tokensPerSecond)
    return true
  }

  get timedSeconds(): number {
    return this.times.reduce((sum, t) => sum + t, 0)
  }

  get timedSteps(): number {
    return this.times.length
  }

  /** Stable: enough timed steps and time, and the mean step time known within 1.5 % (its standard error). */
  stable(minSeconds: number): boolean {
    const n = this.times.length
    if (n < MIN_STABLE_STEPS || this.timedSeconds < minSeconds) return false
    const mean = this.timedSeconds / n
    const variance = this.times.reduce((sum, t) => sum + (t - mean) ** 2, 0) / (n - 1)
    return Math.sqrt(variance / n) / mean < STABLE_ERROR
  }

  figures(): SeriesFigures | null {
    const steps = this.times.length
    if (steps === 0) return null
    const seconds = this.timedSeconds
    return {
      tokensPerSecond: (this.tokensPerStep * steps) / seconds,
      stepSeconds: seconds / steps,
      steps,
      seconds,
    }
  }
}
