import type { FitVerdict, RunKind } from '../schemas/index.js'
import { insideBand } from './band-calibration.js'
import { FIT_BANDS, type FitBand, fitVerdict } from './confidence.js'
import { estimate } from './estimate.js'
import { isMemoryMetric, isOutcomeMetric, measuredValue, validationInput } from './validation.js'
import { bandsFromOutcomes, type HeldOutFold } from './validation-fit.js'

/** A fitting run predicted at or below this share of its device is one a verdict should not hedge on. */
export const CLEAR_FIT_SHARE = 0.85

/** The verdict on one measured run, held out by source: constants and bands both fitted without its source. */
export interface HeldOutVerdict {
  id: string
  source: string
  kind: RunKind
  /** False for a run measured to run out of memory; true for every run that ran (measured memory, speed or `fits`). */
  ran: boolean
  /** What the run needs: the predicted nvidia-smi total less the releasable cache. */
  need: number
  /** The device memory the run had. */
  capacity: number
  verdict: FitVerdict
}

export interface VerdictRates {
  /** Runs that ran (measured memory, speed or `fits`). */
  fitting: number
  /** Of those, the ones predicted at or below CLEAR_FIT_SHARE of their device. */
  clearFits: number
  /** Runs that ran, predicted at or below CLEAR_FIT_SHARE of their device, not called `fits`: needless hedges. */
  falseHedges: string[]
  /** False hedges over the runs predicted at or below CLEAR_FIT_SHARE of their device, the runs they come from. */
  falseHedgeRate: number
  verdicts: number
  /** Runs measured out of memory called `fits`. */
  oomCalledFits: string[]
  /** Runs that ran called `does-not-fit`. */
  ranCalledNotFit: string[]
  wrongVerdictRate: number
  /** Held-out memory rows inside the band computed without their source, over all held-out memory rows. */
  bandCoverage: number
}

/** The bands a source's runs are judged with. */
export type BandsFor = (source: string) => Record<RunKind, FitBand>

/** The shipped bands: calibrated on every source's held-out rows (what `rigfit estimate` uses). */
export const shippedBands: BandsFor = () => FIT_BANDS

/** Bands calibrated without the judged source as well: each source's held-out rows from every other source. */
export function bandsWithoutSource(folds: readonly HeldOutFold[]): BandsFor {
  const cache = new Map<string, Record<RunKind, FitBand>>()
  return (source) => {
    let bands = cache.get(source)
    if (!bands) {
      bands = bandsFromOutcomes(folds.filter((f) => f.source !== source).flatMap((f) => f.outcomes))
      cache.set(source, bands)
    }
    return bands
  }
}

/**
 * The fit verdict on every measured run, held out by source: its need predicted with the constants fitted without
 * its source. A run measured by several rows (its memory and its speed) counts once.
 */
export function heldOutVerdicts(folds: readonly HeldOutFold[], bandsFor: BandsFor): HeldOutVerdict[] {
  return folds.flatMap((fold) => {
    const bands = bandsFor(fold.source)
    const seen = new Set<string>()
    return fold.outcomes.flatMap((outcome) => {
      const { model, settings, gpu } = outcome.row
      const key = JSON.stringify([outcome.metric === 'oom', model, settings, gpu])
      const input = validationInput(outcome.row)
      if (seen.has(key) || !input.device) return []
      seen.add(key)
      const result = estimate(input, fold.tuning)
      const need = result.perDevice.total - result.perDevice.releasable
      const capacity = isOutcomeMetric(outcome.metric) ? measuredValue(outcome.row) : input.device.vramBytes
      return [
        {
          id: outcome.id,
          source: fold.source,
          kind: outcome.kind,
          ran: outcome.metric !== 'oom',
          need,
          capacity,
          verdict: fitVerdict(need, capacity, outcome.kind, bands).verdict,
        },
      ]
    })
  })
}

/** Share of held-out memory rows whose measurement lies inside their kind's band. */
function heldOutCoverage(folds: readonly HeldOutFold[], bandsFor: BandsFor): number {
  const memory = folds.flatMap((fold) =>
    fold.outcomes
      .filter((o) => isMemoryMetric(o.metric))
      .map((o) => insideBand(o.measured / o.predicted, bandsFor(fold.source)[o.kind])),
  )
  return memory.length === 0 ? 0 : memory.filter(Boolean).length / memory.length
}

/** The false-hedge and wrong-verdict rates of the held-out verdicts, and the held-out coverage of the bands. */
export function verdictRates(folds: readonly HeldOutFold[], bandsFor: BandsFor = shippedBands): VerdictRates {
  const verdicts = heldOutVerdicts(folds, bandsFor)
  const fitting = verdicts.filter((v) => v.ran)
  const clear = fitting.filter((v) => v.need <= CLEAR_FIT_SHARE * v.capacity)
  const falseHedges = clear.filter((v) => v.verdict !== 'fits').map((v) => v.id)
  const oomCalledFits = verdicts.filter((v) => !v.ran && v.verdict === 'fits').map((v) => v.id)
  const ranCalledNotFit = verdicts.filter((v) => v.ran && v.verdict === 'does-not-fit').map((v) => v.id)
  return {
    fitting: fitting.length,
    clearFits: clear.length,
    falseHedges,
    falseHedgeRate: clear.length === 0 ? 0 : falseHedges.length / clear.length,
    verdicts: verdicts.length,
    oomCalledFits,
    ranCalledNotFit,
    wrongVerdictRate:
      verdicts.length === 0 ? 0 : (oomCalledFits.length + ranCalledNotFit.length) / verdicts.length,
    bandCoverage: heldOutCoverage(folds, bandsFor),
  }
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`

function rateLines(rates: VerdictRates): string[] {
  const share = (n: number, of: number) => `${n} of ${of} (${((of === 0 ? 0 : n / of) * 100).toFixed(1)}%)`
  return [
    `- memory rows inside their kind's band: ${(rates.bandCoverage * 100).toFixed(1)}%;`,
    `- false hedges (runs that ran, predicted at ≤ 85% of the device, yet not called \`fits\`): ${share(rates.falseHedges.length, rates.fitting)} runs that ran; ${share(rates.falseHedges.length, rates.clearFits)} runs predicted at ≤ 85%;`,
    `- measured out-of-memory runs called \`fits\`: ${rates.oomCalledFits.length}${rates.oomCalledFits.length ? ` (${rates.oomCalledFits.join(', ')})` : ''};`,
    `- runs that ran called \`does-not-fit\`: ${rates.ranCalledNotFit.length}; wrong verdicts in all: ${share(rates.oomCalledFits.length + rates.ranCalledNotFit.length, rates.verdicts)}.`,
  ]
}

/**
 * Markdown: the band of each kind of run with its n and basis, then the verdict rates on the rows held out by
 * source, with the shipped bands and with bands calibrated without the judged source too.
 */
export function renderVerdictBands(
  bands: Record<RunKind, FitBand>,
  shipped: VerdictRates,
  withoutSource: VerdictRates,
): string {
  return [
    '| kind of run | band | n | rows of | inside the band |',
    '| --- | --- | ---: | --- | ---: |',
    ...Object.entries(bands).map(
      ([kind, b]) =>
        `| ${kind} | −${pct(b.over)}/+${pct(b.under)} | ${b.rows} | ${b.basis === kind ? kind : `${b.basis} (pooled)`} | ${(b.coverage * 100).toFixed(1)}% |`,
    ),
    '',
    `With the shipped bands, over the ${shipped.verdicts} measured runs, each predicted with constants fitted without its source:`,
    '',
    ...rateLines(shipped),
    '',
    'With the bands calibrated without the judged source as well:',
    '',
    ...rateLines(withoutSource),
  ].join('\n')
}
