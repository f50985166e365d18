import { type MetricsSource, TrainerMetricsLine } from '@rigfit/core'
import { count, parseLightningBar, parseStepLossLine } from './parse-text-progress.js'
import { parsePythonLiteral } from './python-literal.js'

/** Training figures a trainer reported in one line; a figure it did not report is absent. */
export interface TrainerMetrics {
  step?: number
  totalSteps?: number
  loss?: number
  learningRate?: number
  epoch?: number
  /** Cumulative tokens processed. */
  tokens?: number
  tokensPerSecond?: number
  samplesPerSecond?: number
  checkpointSeconds?: number
}

export interface ParsedMetrics {
  source: Exclude<MetricsSource, 'file'>
  metrics: TrainerMetrics
}

// tqdm's bar without a description (the Trainer's own progress bar): " 45%|████▌     | 450/1000 [01:23<01:40,  5.43it/s]".
const TQDM_BAR = /^\s*\d{1,3}%\|[^|]*\|\s*(\d+)\/(\d+)\s*\[[^\]]*(?:it\/s|s\/it)/

/**
 * Reads training metrics out of one line of trainer output: a JSON object (`{"step": 10, "loss": 2.3}`), a
 * Python dict as Hugging Face Trainer prints it (`{'loss': 2.31, 'learning_rate': 4e-05, 'epoch': 0.5}`),
 * possibly after a log prefix, a tqdm progress bar, Lightning's progress bar, or a `step N … loss X` line.
 * Lines that carry no known figure answer null.
 */
export function parseTrainingLine(line: string): ParsedMetrics | null {
  const open = line.indexOf('{')
  const close = line.lastIndexOf('}')
  if (open >= 0 && close > open) {
    const body = line.slice(open, close + 1)
    const json = parseJsonObject(body)
    if (json !== undefined) {
      const metrics = metricsFromObject(json)
      return metrics ? { source: 'json', metrics } : null
    }
    const literal = parsePythonLiteral(body)
    if (isPlainObject(literal)) {
      const metrics = metricsFromObject(literal)
      return metrics ? { source: 'hf', metrics } : null
    }
    return null
  }
  const bar = TQDM_BAR.exec(line)
  if (bar) {
    const step = count(bar[1])
    const total = count(bar[2])
    if (step === undefined) return null
    return {
      source: 'tqdm',
      metrics: total !== undefined && total > 0 ? { step, totalSteps: total } : { step },
    }
  }
  const lightning = parseLightningBar(line)
  if (lightning !== null) return { source: 'lightning', metrics: lightning }
  const text = parseStepLossLine(line)
  return text === null ? null : { source: 'text', metrics: text }
}

/** Normalises a metrics object (aliases folded, non-finite values dropped); null when it holds no known figure. */
export function metricsFromObject(raw: Record<string, unknown>): TrainerMetrics | null {
  const finite: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(raw)) {
    finite[key] = typeof value === 'number' && !Number.isFinite(value) ? null : value
  }
  const parsed = TrainerMetricsLine.safeParse(finite)
  if (!parsed.success) return null
  const line = parsed.data
  const pick = (...values: (number | null | undefined)[]) => values.find((value) => typeof value === 'number')
  const metrics: TrainerMetrics = {}
  const set = <K extends keyof TrainerMetrics>(key: K, value: number | undefined) => {
    if (value !== undefined) metrics[key] = value
  }
  const step = pick(line.step, line.global_step)
  set('step', step !== undefined && step >= 0 ? Math.floor(step) : undefined)
  const total = pick(line.total_steps, line.max_steps)
  set('totalSteps', total !== undefined && total > 0 ? Math.floor(total) : undefined)
  set('loss', pick(line.loss, line.train_loss))
  set('learningRate', pick(line.learning_rate, line.lr))
  set('epoch', pick(line.epoch))
  set('tokens', nonNegative(pick(line.tokens, line.num_input_tokens_seen)))
  set('tokensPerSecond', nonNegative(pick(line.tokens_per_second)))
  set('samplesPerSecond', nonNegative(pick(line.samples_per_second)))
  set('checkpointSeconds', nonNegative(pick(line.checkpoint_seconds)))
  return Object.keys(metrics).length > 0 ? metrics : null
}

function nonNegative(value: number | undefined): number | undefined {
  return value !== undefined && value >= 0 ? value : undefined
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return isPlainObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
