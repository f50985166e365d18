import type { TrainerMetrics } from './parse-training-line.js'

// Each pattern is linear in the line: no nested or adjacent unbounded quantifiers over the same characters.
const NUMBER = '([-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)'

/**
 * Lightning's TQDMProgressBar: `Epoch 3:  45%|████▌     | 45/100 [00:03<00:04, 13.20it/s, v_num=0, train_loss=2.310]`.
 * The bar counts the epoch's batches; its postfix carries the logged metrics.
 */
const LIGHTNING_BAR = /^\s*Epoch (\d+):\s*\d{1,3}%\|[^|]*\|\s*(\d+)\/(\d+)\s*\[([^\]]*)\]/
const LIGHTNING_LOSS = new RegExp(`(?:^|[ ,])(?:train_loss(?:_step)?|loss)=${NUMBER}`)

/** `step 120 loss 2.31`, `Step 120/1000 | loss: 2.31 | lr: 3e-4`, `iter 120: loss 2.31, time 12ms`, `step:120/1000 train_loss:2.31`. */
const STEP = /\b(?:step|iter|iteration)\s{0,4}[:=]?\s{0,4}(\d+)(?:\s{0,4}\/\s{0,4}(\d+))?\b/i
const LOSS = new RegExp(`\\b(?:train[_ ])?loss\\s{0,4}[:=]?\\s{0,4}${NUMBER}`, 'i')
const LEARNING_RATE = new RegExp(`\\b(?:lr|learning[_ ]rate)\\s{0,4}[:=]?\\s{0,4}${NUMBER}`, 'i')

/** A count (a step, a batch, an epoch) only when it is a whole number a double holds exactly. */
export function count(text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const value = Number(text)
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

function finite(text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const value = Number(text)
  return Number.isFinite(value) ? value : undefined
}

/**
 * Lightning's progress bar: the step is counted in batches across epochs (epoch × batches per epoch + batch),
 * the epoch as a fraction, and the loss from the postfix. Null for any other line.
 */
export function parseLightningBar(line: string): TrainerMetrics | null {
  const bar = LIGHTNING_BAR.exec(line)
  if (bar === null) return null
  const epoch = count(bar[1])
  const batch = count(bar[2])
  const perEpoch = count(bar[3])
  if (epoch === undefined || batch === undefined || perEpoch === undefined || !(perEpoch > 0)) return null
  const step = epoch * perEpoch + batch
  if (!Number.isSafeInteger(step)) return null
  const metrics: TrainerMetrics = { step, epoch: epoch + batch / perEpoch }
  const loss = finite(LIGHTNING_LOSS.exec(bar[4] ?? '')?.[1])
  if (loss !== undefined) metrics.loss = loss
  return metrics
}

/**
 * A plain log line with a step (or iteration) number and a loss, as hand-written loops print them. Both are
 * needed, so that prose mentioning a "step" is not read as progress; `/ total` after the step gives the total.
 */
export function parseStepLossLine(line: string): TrainerMetrics | null {
  const step = STEP.exec(line)
  if (step === null) return null
  const loss = finite(LOSS.exec(line.slice(step.index + step[0].length))?.[1])
  if (loss === undefined) return null
  // Digits past what a double holds exactly are not a step count (a garbled line).
  const stepNumber = count(step[1])
  if (stepNumber === undefined) return null
  const metrics: TrainerMetrics = { step: stepNumber, loss }
  const total = count(step[2])
  if (total !== undefined && total > 0) metrics.totalSteps = total
  const lr = finite(LEARNING_RATE.exec(line)?.[1])
  if (lr !== undefined) metrics.learningRate = lr
  return metrics
}
