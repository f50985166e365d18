export type GateTransition = 'close' | 'open' | null

/**
 * Pause above `high`, resume below `low`. `sustain` readings in a row above the limit are needed to close it,
 * so a single spike (power draw jumps for milliseconds) does not stop a run. Unknown readings change nothing.
 */
export class HysteresisGate {
  private above = 0
  closed = false

  constructor(
    readonly high: number,
    readonly low: number,
    private readonly sustain = 1,
  ) {}

  update(value: number | null): GateTransition {
    if (value === null) return null
    if (!this.closed) {
      this.above = value > this.high ? this.above + 1 : 0
      if (this.above >= this.sustain) {
        this.closed = true
        this.above = 0
        return 'close'
      }
      return null
    }
    if (value < this.low) {
      this.closed = false
      return 'open'
    }
    return null
  }
}
