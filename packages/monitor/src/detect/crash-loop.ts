/**
 * N failures within a window, counted only while the settings stay the same: a relaunch with the same
 * settings that keeps failing will not start working, whereas the OOM ladder changes something every time.
 */
export class CrashLoopGuard {
  private failures: number[] = []

  constructor(private readonly limit: { failures: number; windowMs: number }) {}

  /** Records a failure at `nowMs`; true when it completes a crash loop. */
  record(nowMs: number): boolean {
    this.failures = this.failures.filter((at) => nowMs - at <= this.limit.windowMs)
    this.failures.push(nowMs)
    return this.failures.length >= this.limit.failures
  }

  get count(): number {
    return this.failures.length
  }

  reset(): void {
    this.failures = []
  }
}
