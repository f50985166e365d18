import type { TrainerMetrics } from './parse-training-line.js'

export interface ProgressSnapshot {
  step: number | null
  totalSteps: number | null
  loss: number | null
  learningRate: number | null
  epoch: number | null
  tokens: number | null
  tokensPerSecond: number | null
  samplesPerSecond: number | null
  stepSeconds: number | null
  etaSeconds: number | null
  checkpointSeconds: number | null
}

export interface ProgressBasis {
  /** Sequences per optimizer step (the plan's effective batch); turns a step rate into samples/s. */
  effectiveBatch: number | null
  /** Tokens per sequence; turns samples/s into tokens/s when the trainer reports no token count. */
  seq: number | null
  /** From --total-steps: wins over what the trainer reports. */
  totalStepsOverride: number | null
  /** From the plan: used when neither the flag nor the trainer says. */
  totalStepsFromPlan: number | null
}

interface Point {
  at: number
  value: number
}

const WINDOW = 20

/**
 * Folds the trainer's metric lines into a live picture: the last step, loss and learning rate, and rates
 * measured over the last steps on the monitor's active clock (pauses excluded), so ETA is honest after a pause.
 */
export class TrainingProgress {
  private state: Omit<
    ProgressSnapshot,
    'tokensPerSecond' | 'samplesPerSecond' | 'stepSeconds' | 'etaSeconds'
  > = {
    step: null,
    totalSteps: null,
    loss: null,
    learningRate: null,
    epoch: null,
    tokens: null,
    checkpointSeconds: null,
  }
  private reportedTokensPerSecond: number | null = null
  private reportedSamplesPerSecond: number | null = null
  private steps: Point[] = []
  private tokenPoints: Point[] = []
  private tqdmTotal: number | null = null
  /** Once the trainer reports token counts, rates come from them only, never from the plan's batch x seq. */
  private tokensReported = false

  constructor(private basis: ProgressBasis) {}

  /** A new attempt restarts the rate windows: its first steps repeat work resumed from a checkpoint. */
  startAttempt(): void {
    this.steps = []
    this.tokenPoints = []
  }

  setEffectiveBatch(effectiveBatch: number | null): void {
    this.basis = { ...this.basis, effectiveBatch }
  }

  /**
   * Applies one metrics line read at `activeSeconds`. Answers whether it moved training forward; tqdm bars
   * with a different total than the first one seen (an evaluation loop's) are ignored and answer null.
   */
  update(
    metrics: TrainerMetrics,
    fromTqdm: boolean,
    activeSeconds: number,
  ): { stepAdvanced: boolean; changed: boolean } | null {
    if (fromTqdm && metrics.totalSteps !== undefined) {
      this.tqdmTotal ??= metrics.totalSteps
      if (metrics.totalSteps !== this.tqdmTotal) return null
    }
    const previousStep = this.state.step
    const before = JSON.stringify(this.state)
    const s = this.state
    if (metrics.step !== undefined) s.step = metrics.step
    if (metrics.totalSteps !== undefined) s.totalSteps = metrics.totalSteps
    if (metrics.loss !== undefined) s.loss = metrics.loss
    if (metrics.learningRate !== undefined) s.learningRate = metrics.learningRate
    if (metrics.epoch !== undefined) s.epoch = metrics.epoch
    if (metrics.checkpointSeconds !== undefined) s.checkpointSeconds = metrics.checkpointSeconds
    if (metrics.tokensPerSecond !== undefined) this.reportedTokensPerSecond = metrics.tokensPerSecond
    if (metrics.samplesPerSecond !== undefined) this.reportedSamplesPerSecond = metrics.samplesPerSecond
    if (metrics.tokens !== undefined) {
      this.tokensReported = true
      s.tokens = metrics.tokens
      pushPoint(this.tokenPoints, { at: activeSeconds, value: metrics.tokens })
    }
    const stepAdvanced =
      metrics.step !== undefined && (previousStep === null || metrics.step !== previousStep)
    if (metrics.step !== undefined && stepAdvanced) {
      pushPoint(this.steps, { at: activeSeconds, value: metrics.step })
    }
    const changed =
      metrics.tokensPerSecond !== undefined ||
      metrics.samplesPerSecond !== undefined ||
      JSON.stringify(s) !== before
    return { stepAdvanced, changed }
  }

  get hasStep(): boolean {
    return this.state.step !== null
  }

  snapshot(): ProgressSnapshot {
    const stepRate = rate(this.steps)
    const stepSeconds = stepRate !== null && stepRate > 0 ? 1 / stepRate : null
    const samplesPerSecond =
      this.reportedSamplesPerSecond ??
      (stepRate !== null && this.basis.effectiveBatch !== null ? stepRate * this.basis.effectiveBatch : null)
    const tokensPerSecond =
      this.reportedTokensPerSecond ??
      rate(this.tokenPoints) ??
      (!this.tokensReported && samplesPerSecond !== null && this.basis.seq !== null
        ? samplesPerSecond * this.basis.seq
        : null)
    const totalSteps = this.basis.totalStepsOverride ?? this.state.totalSteps ?? this.basis.totalStepsFromPlan
    const step = this.state.step
    const etaSeconds =
      totalSteps !== null && step !== null && stepSeconds !== null
        ? Math.max(0, totalSteps - step) * stepSeconds
        : null
    return { ...this.state, totalSteps, tokensPerSecond, samplesPerSecond, stepSeconds, etaSeconds }
  }
}

function pushPoint(points: Point[], point: Point): void {
  const last = points.at(-1)
  // A value going backwards (resume from an older checkpoint) starts the window afresh.
  if (last !== undefined && point.value < last.value) points.length = 0
  points.push(point)
  if (points.length > WINDOW) points.shift()
}

/** Units per second across the window; null until two points span some time. */
function rate(points: Point[]): number | null {
  const first = points[0]
  const last = points.at(-1)
  if (first === undefined || last === undefined || last.at <= first.at) return null
  return (last.value - first.value) / (last.at - first.at)
}
