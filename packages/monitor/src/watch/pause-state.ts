import type { LimitCause } from './limit-watch.js'

/**
 * Which limits hold the trainer paused, and for how long it has been paused in all: the active clock that
 * rates, ETA and hang detection run on leaves this time out.
 */
export class PauseState {
  private readonly reasons = new Map<LimitCause, string>()
  private sinceMs: number | null = null
  private totalMs = 0

  get paused(): boolean {
    return this.reasons.size > 0
  }

  has(cause: LimitCause): boolean {
    return this.reasons.has(cause)
  }

  why(): string[] {
    return [...this.reasons.values()]
  }

  causes(): LimitCause[] {
    return [...this.reasons.keys()]
  }

  /** Adds a reason; true when this starts the pause (the trainer must be stopped now). */
  add(cause: LimitCause, reason: string, nowMs = Date.now()): boolean {
    const starts = this.reasons.size === 0
    this.reasons.set(cause, reason)
    if (starts) this.sinceMs = nowMs
    return starts
  }

  /** Removes a reason; 'resumed' when none is left, 'still-paused' when others hold, null when it was not one. */
  remove(cause: LimitCause, nowMs = Date.now()): 'resumed' | 'still-paused' | null {
    if (!this.reasons.delete(cause)) return null
    if (this.reasons.size > 0) return 'still-paused'
    this.totalMs += nowMs - (this.sinceMs ?? nowMs)
    this.sinceMs = null
    return 'resumed'
  }

  /** Forgets every reason (the run is being stopped). */
  clear(nowMs = Date.now()): void {
    if (this.sinceMs !== null) this.totalMs += nowMs - this.sinceMs
    this.sinceMs = null
    this.reasons.clear()
  }

  pausedMs(nowMs = Date.now()): number {
    return this.totalMs + (this.sinceMs === null ? 0 : nowMs - this.sinceMs)
  }
}
