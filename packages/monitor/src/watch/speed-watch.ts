/** How far the measured speed may be from the plan's before the monitor says so. */
export const SPEED_OFF_PLAN = 0.3
/** Reports left out as warm-up (compilation, allocation, caches), and reports needed after them. */
const WARMUP_REPORTS = 1
const STEADY_REPORTS = 3

export interface SpeedFinding {
  message: string
  details: { plannedTokensPerSecond: number; measuredTokensPerSecond: number; etaSeconds: number | null }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`
  return `${(seconds / 3600).toFixed(1)} h`
}

/**
 * Compares the trainer's steady-state speed (the median of its reports after warm-up) with the plan's, and finds
 * it off by more than 30 % at most once: the plan's time and ETA would then mislead, and the message gives the
 * ETA at the measured speed.
 */
export class SpeedWatch {
  private readonly reports: number[] = []
  private told = false

  constructor(private readonly plannedTokensPerSecond: number | null) {}

  observe(tokensPerSecond: number | null, etaSeconds: number | null): SpeedFinding | null {
    const planned = this.plannedTokensPerSecond
    if (this.told || planned === null || planned <= 0 || tokensPerSecond === null || tokensPerSecond <= 0)
      return null
    this.reports.push(tokensPerSecond)
    const steady = this.reports.slice(WARMUP_REPORTS)
    if (steady.length < STEADY_REPORTS) return null
    const measured = median(steady)
    const off = measured / planned - 1
    if (Math.abs(off) <= SPEED_OFF_PLAN) return null
    this.told = true
    const eta = etaSeconds !== null ? `; at this speed the run ends in ${duration(etaSeconds)}` : ''
    return {
      message: `measured speed ${Math.round(measured)} tokens/s is ${Math.round(Math.abs(off) * 100)}% ${off < 0 ? 'below' : 'above'} the plan's ${Math.round(planned)} tokens/s${eta} (rigfit calibrate measures this machine before planning)`,
      details: { plannedTokensPerSecond: planned, measuredTokensPerSecond: measured, etaSeconds },
    }
  }
}
