import { describe, expect, it } from 'vitest'
import { steadyState } from '../../../src/lib/calibration/learn-from-run.js'

const TOKENS_PER_STEP = 2048
const line = (record: object) => JSON.stringify(record)
const metrics = (attempt: number, tokensPerSecond: number | null, source = 'json') =>
  line({ type: 'metrics', attempt, source, tokensPerSecond })
const output = (attempt: number, stream: string, text: string) =>
  line({ type: 'output', attempt, stream, line: text })

describe('steadyState of a supervised run', () => {
  it('drops the first report, weighs each step by its time, and reads the peak memory the trainer printed', () => {
    const log = [
      line({ type: 'start' }),
      output(1, 'stderr', 'rigfit train: rank 0 of 1 settings {}'),
      metrics(1, 10),
      metrics(1, 1000),
      metrics(1, 2000),
      metrics(1, 1000),
      output(
        1,
        'stdout',
        '{"step": 3, "tokens_per_second": 1000.0, "max_memory_allocated": 500, "max_memory_reserved": 900}',
      ),
      output(
        1,
        'stdout',
        '{"step": 4, "tokens_per_second": 1000.0, "max_memory_allocated": 700, "max_memory_reserved": 800}',
      ),
      'not json',
    ].join('\n')
    const steady = steadyState(log, TOKENS_PER_STEP)
    const seconds = TOKENS_PER_STEP / 1000 + TOKENS_PER_STEP / 2000 + TOKENS_PER_STEP / 1000
    expect(steady).toEqual({
      stack: 'plain',
      measured: {
        tokensPerSecond: (3 * TOKENS_PER_STEP) / seconds,
        stepSeconds: seconds / 3,
        steps: 3,
        seconds,
        peakAllocatedBytes: 700,
        peakReservedBytes: 900,
      },
    })
  })

  it('reads the last attempt only, and needs three reports after warm-up', () => {
    const tooFew = [
      metrics(1, 5),
      metrics(1, 100),
      metrics(1, 100),
      metrics(1, 100),
      metrics(2, 5),
      metrics(2, 100),
      metrics(2, 100),
    ]
    expect(steadyState(tooFew.join('\n'), TOKENS_PER_STEP)).toBeNull()
    const hf = [
      metrics(1, 7, 'hf'),
      metrics(1, 300, 'hf'),
      metrics(1, 300, 'hf'),
      metrics(1, null, 'hf'),
      metrics(1, 300, 'hf'),
    ]
    const steady = steadyState(hf.join('\n'), TOKENS_PER_STEP)
    expect(steady?.stack).toBe('hf')
    expect(steady?.measured.tokensPerSecond).toBeCloseTo(300, 9)
    expect(steady?.measured.peakAllocatedBytes).toBeNull()
  })
})
