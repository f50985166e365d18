import { describe, expect, it } from 'vitest'
import { MIN_BAND_ROWS } from '../../src/estimate/band-calibration.js'
import { FIT_BANDS } from '../../src/estimate/confidence.js'
import { SHIPPED_TUNING } from '../../src/estimate/estimate.js'
import {
  evaluateValidationRow,
  parseValidationRow,
  type ValidationOutcome,
  validationInput,
} from '../../src/estimate/validation.js'
import {
  bandsFromOutcomes,
  fitTuning,
  isLaunchBound,
  leaveOneSourceOut,
  PRIOR_TUNING,
} from '../../src/estimate/validation-fit.js'
import { isHarnessOutcome, renderValidationReport } from '../../src/estimate/validation-report.js'
import { summarizeOutcomes, summarizeValidation, summaryOf } from '../../src/estimate/validation-summary.js'
import {
  bandsWithoutSource,
  renderVerdictBands,
  verdictRates,
} from '../../src/estimate/validation-verdicts.js'
import { countParams } from '../../src/model/params.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'
import type { ValidationRow } from '../../src/schemas/index.js'
import { parseStackRef } from '../../src/stack/stack-ref.js'

const rows: ValidationRow[] = loadValidationRows()

/** What a user typing the row's settings and `--stack` must get: median memory error and share within 15%. */
const TARGET = { memoryMedian: 0.06, within15: 0.85 } as const

/**
 * The figures the model reaches (docs/estimate.md shows them), published runs and rigfit's own calibration harness
 * apart; the thresholds sit at those figures, so a change that makes the model worse fails here. As typed: each row
 * through `rigfit estimate`'s path with its settings and stack alone, shipped constants. Held out: each source
 * predicted with constants fitted without it.
 */
const REACHED = {
  // Tokens/s rose from 0.047 when GPT-2's unaligned head and Python GELU joined the model and the H200 Transformers
  // rows joined the fit (matmul 0.90, attention 0.7, Hopper 0.90, 17 µs per op).
  asTypedPublished: { memoryMedian: 0.049, within15: 0.855, speedMedian: 0.051 },
  // The harness's tokens/s include the CPU rows since they were added, and the H200 Transformers rows
  // (calibrate-hf-h200.jsonl) since they were; with them, memory reads 0.052 (from 0.044) and 85.3% within 15%
  // (from 85.5%): checkpointed runs reserve 1-12 GiB more than they allocate, which the allocator model does not
  // price (docs/estimate.md).
  asTypedHarness: { memoryMedian: 0.052, within15: 0.853, speedMedian: 0.095 },
  // Published tokens/s include the AMD row and the Ryzen 9 CPU rows since they were added (the NVIDIA rows' own
  // figure is held in validation-speed.test.ts as the datacenter class's bound).
  heldOutPublished: { memoryMedian: 0.05, within15: 0.848, speedMedian: 0.052 },
  heldOutHarness: { memoryMedian: 0.067, within15: 0.853, speedMedian: 0.12 },
  /** Held-out verdicts (`validation-verdicts.ts`): bands and constants both fitted without the run's source. */
  verdicts: {
    shipped: { falseHedgeRate: 0.09, wrongVerdictRate: 0.092, oomCalledFits: 0, bandCoverage: 0.918 },
    withoutSource: { falseHedgeRate: 0.108, wrongVerdictRate: 0.096, oomCalledFits: 1, bandCoverage: 0.869 },
  },
} as const

describe('validation dataset', () => {
  const inSample = rows.map((row) => evaluateValidationRow(row))
  const folds = leaveOneSourceOut(rows)
  const heldOut = folds.flatMap((fold) => fold.outcomes)

  it('holds distinct measured configurations, each with its source, stack and metric', () => {
    expect(rows.length).toBeGreaterThanOrEqual(408)
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length)
    expect(new Set(rows.map((r) => r.source.id)).size).toBeGreaterThanOrEqual(17)
    expect(rows.filter((r) => r.metric === 'oom').length).toBeGreaterThanOrEqual(13)
    for (const row of rows) expect(row.source.says.length, row.id).toBeGreaterThan(10)
  })

  it('spans 100M to 70B parameters, full/LoRA/QLoRA, every precision family, checkpointing and several GPUs', () => {
    const sizes = rows.map((r) => countParams(validationInput(r).model).total)
    expect(Math.min(...sizes)).toBeLessThanOrEqual(1.5e8)
    expect(Math.max(...sizes)).toBeGreaterThanOrEqual(6e10)
    expect(rows.some((r) => r.settings.lora && r.settings.quant === 'nf4')).toBe(true)
    expect(rows.some((r) => r.settings.lora && (r.settings.quant ?? 'none') === 'none')).toBe(true)
    expect(rows.some((r) => !r.settings.lora)).toBe(true)
    for (const precision of ['fp32', 'fp16-mixed', 'bf16-mixed', 'bf16-true']) {
      expect(
        rows.some((r) => r.settings.precision === precision),
        precision,
      ).toBe(true)
    }
    expect(rows.some((r) => r.settings.gradCheckpointing)).toBe(true)
    expect(rows.some((r) => (r.settings.gpus ?? 1) > 1)).toBe(true)
    // Consumer and datacenter NVIDIA cards, and AMD's.
    for (const gpu of [/GeForce RTX/, /Tesla T4/, /A100/, /H100/, /Instinct/]) {
      expect(
        rows.some((r) => gpu.test(r.gpu.name)),
        String(gpu),
      ).toBe(true)
    }
    // Both ways a LoRA stack keeps its adapters on a 16-bit base.
    for (const adapterDtype of ['fp32', 'model']) {
      expect(
        rows.some((r) => r.settings.lora && validationInput(r).adapterDtype === adapterDtype),
        adapterDtype,
      ).toBe(true)
    }
  })

  it('ships the global constants fitted to the whole dataset', () => {
    expect(fitTuning(rows)).toEqual(SHIPPED_TUNING)
  })

  it('fits the kernel launch cost to the launch-bound rows only, and keeps its prior without them', () => {
    const speedRows = rows.filter((r) => r.metric === 'tokens_per_second')
    const bound = speedRows.map(isLaunchBound)
    const launchBound = speedRows.filter((_, i) => bound[i])
    const others = speedRows.filter((_, i) => !bound[i])
    expect(launchBound.length).toBeGreaterThanOrEqual(5)
    expect(others.length).toBeGreaterThanOrEqual(5)
    // Large-batch rows barely move with the launch cost: they leave it where the prior puts it.
    expect(fitTuning(others).kernelOverheadSeconds).toBe(PRIOR_TUNING.kernelOverheadSeconds)
    // The launch-bound rows set it, within the 5-25 µs of host work an eager PyTorch op takes.
    const fitted = fitTuning(speedRows).kernelOverheadSeconds
    expect(fitted).toBeGreaterThanOrEqual(5e-6)
    expect(fitted).toBeLessThanOrEqual(25e-6)
  })

  it('predicts memory and speed as typed with --stack within the targets, published runs and harness apart', () => {
    // The table the documentation shows; printed so a run shows where the model stands.
    console.log(`\n${renderValidationReport(inSample, folds)}\n`)
    const published = (o: ValidationOutcome) => !isHarnessOutcome(o)
    for (const [name, outcomes, bounds] of [
      ['as typed, published', inSample.filter(published), REACHED.asTypedPublished],
      ['as typed, harness', inSample.filter(isHarnessOutcome), REACHED.asTypedHarness],
      ['held out, published', heldOut.filter(published), REACHED.heldOutPublished],
      ['held out, harness', heldOut.filter(isHarnessOutcome), REACHED.heldOutHarness],
    ] as const) {
      expect(outcomes.length, name).toBeGreaterThan(100)
      const memory = summaryOf(outcomes, 'memory')
      expect(memory?.medianAbsError, name).toBeLessThanOrEqual(bounds.memoryMedian)
      expect(memory?.within15, name).toBeGreaterThanOrEqual(bounds.within15)
      expect(summaryOf(outcomes, 'tokens_per_second')?.medianAbsError, name).toBeLessThanOrEqual(
        bounds.speedMedian,
      )
      if (name.startsWith('as typed')) {
        expect(memory?.medianAbsError, name).toBeLessThanOrEqual(TARGET.memoryMedian)
        expect(memory?.within15, name).toBeGreaterThanOrEqual(TARGET.within15)
      }
    }
  })

  it('states every row as NAME@VERSION a user can pass to --stack, and each harness row as the stack it ran', () => {
    for (const row of rows) {
      expect(() => parseStackRef(row.stack, row.id), row.id).not.toThrow()
      expect(row.stackSays.length, row.id).toBeGreaterThan(10)
      if (row.origin !== 'calibrate') continue
      // calibrate.py is a hand-written PyTorch loop; hf_stack.py runs Transformers' Trainer and names its release.
      const transformers = /Transformers (\d+\.\d+)/.exec(row.stackSays)?.[1]
      if (row.source.url.endsWith('hf_stack.py')) expect(row.stack, row.id).toBe(`hf@${transformers}`)
      else expect(row.stack, row.id).toMatch(/^plain@/)
    }
  })

  it('calls no measured out-of-memory run a fit', () => {
    expect(summarizeOutcomes(inSample).oomPredictedFits).toEqual([])
    expect(summarizeOutcomes(heldOut).oomPredictedFits).toEqual([])
  })

  it('ships the fit bands of the held-out memory errors per kind of run, none from fewer than 20 rows', () => {
    const bands = bandsFromOutcomes(heldOut)
    console.log(`FIT_BANDS = ${JSON.stringify(bands)}`)
    expect(FIT_BANDS).toEqual(bands)
    for (const band of Object.values(FIT_BANDS)) expect(band.rows).toBeGreaterThanOrEqual(MIN_BAND_ROWS)
  })

  it('holds about 90% of the held-out rows in the bands, with at most 10% false hedges and no measured OOM called fits', () => {
    const rates = verdictRates(folds)
    const stricter = verdictRates(folds, bandsWithoutSource(folds))
    // The section docs/estimate.md shows; printed so a run shows where the verdicts stand.
    console.log(`\n${renderVerdictBands(FIT_BANDS, rates, stricter)}\n`)
    expect(rates.oomCalledFits).toEqual([])
    expect(rates.falseHedgeRate).toBeLessThanOrEqual(0.1)
    expect(rates.clearFits).toBeGreaterThanOrEqual(100)
    expect(rates.bandCoverage).toBeGreaterThanOrEqual(0.88)
    expect(rates.bandCoverage).toBeLessThanOrEqual(0.97)
    for (const [bound, reached] of [
      [REACHED.verdicts.shipped, rates],
      [REACHED.verdicts.withoutSource, stricter],
    ] as const) {
      expect(reached.falseHedgeRate).toBeLessThanOrEqual(bound.falseHedgeRate)
      expect(reached.wrongVerdictRate).toBeLessThanOrEqual(bound.wrongVerdictRate)
      expect(reached.oomCalledFits.length).toBeLessThanOrEqual(bound.oomCalledFits)
      expect(reached.bandCoverage).toBeGreaterThanOrEqual(bound.bandCoverage)
    }
  })
})

describe('validation summary', () => {
  const fake = (id: string, metric: ValidationOutcome['metric'], error: number, verdict = null) =>
    ({
      id,
      metric,
      error,
      verdict,
      measured: 1,
      predicted: 1 + error,
      row: rows[0] as ValidationRow,
    }) as unknown as ValidationOutcome

  it('takes the median, the share within 15% and the worst absolute error per metric and over all memory', () => {
    const summary = summarizeValidation([
      fake('a', 'nvidia-smi', 0.1),
      fake('b', 'nvidia-smi', -0.3),
      fake('c', 'max_memory_allocated', 0.02),
      fake('d', 'tokens_per_second', -0.5),
      fake('e', 'oom', 0.4),
    ])
    const by = (m: string) => summary.find((s) => s.metric === m)
    expect(by('nvidia-smi')).toMatchObject({
      count: 2,
      medianAbsError: 0.2,
      within15: 0.5,
      worstAbsError: 0.3,
      worstId: 'b',
    })
    expect(by('memory')).toMatchObject({ count: 3, medianAbsError: 0.1, worstId: 'b' })
    expect(by('tokens_per_second')).toMatchObject({ count: 1, worstAbsError: 0.5 })
    expect(by('oom')).toBeUndefined()
  })

  it('lists out-of-memory runs called fits and fitting runs called does-not-fit', () => {
    const verdicts = summarizeOutcomes([
      { ...fake('x', 'oom', 0), verdict: 'fits' },
      { ...fake('y', 'oom', 0), verdict: 'borderline' },
      { ...fake('z', 'fits', 0), verdict: 'does-not-fit' },
    ])
    expect(verdicts).toEqual({ oom: 2, oomPredictedFits: ['x'], fits: 1, fitsPredictedNotFit: ['z'] })
  })

  it('rejects a malformed row naming where it is, and settings a user cannot pass', () => {
    expect(() => parseValidationRow({ id: 'x' }, 'rows.jsonl:3')).toThrow(/rows.jsonl:3/)
    const row = JSON.parse(JSON.stringify(rows[0]))
    row.settings.matmulEfficiency = 0.5
    expect(() => parseValidationRow(row, 'rows.jsonl:4')).toThrow(/rows.jsonl:4/)
    // The stack decides the mechanisms: a row cannot carry them.
    for (const knob of [
      'upcastLogits',
      'adapterDtype',
      'optimizerImpl',
      'cudaContextBytes',
      'quantKeepsInputs',
    ]) {
      const withKnob = JSON.parse(JSON.stringify(rows[0]))
      withKnob.settings[knob] = true
      expect(() => parseValidationRow(withKnob, 'rows.jsonl:5'), knob).toThrow(/rows.jsonl:5: settings/)
    }
    const noVersion = { ...JSON.parse(JSON.stringify(rows[0])), stack: 'hf' }
    expect(() => parseValidationRow(noVersion, 'rows.jsonl:6')).toThrow(/rows.jsonl:6: stack/)
  })
})
