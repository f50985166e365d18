import type { ValidationRow } from '../schemas/index.js'
import { type ValidationOutcome, validationInput } from './validation.js'
import { median } from './validation-summary.js'

/** The kinds of device the speed model is reported on: the tokens/s of each is checked on its own rows. */
export const DEVICE_CLASSES = ['datacenter', 'consumer', 'apple', 'amd', 'intel', 'cpu'] as const
export type DeviceClass = (typeof DEVICE_CLASSES)[number]

/** Training methods the speed model is reported on; a mixture-of-experts model counts as `moe` whatever its method. */
export const SPEED_METHODS = ['full', 'lora', 'qlora', 'moe'] as const
export type SpeedMethod = (typeof SPEED_METHODS)[number]

/** GeForce and TITAN boards are consumer cards; every other NVIDIA board (Tesla, A/H/L series, RTX A) a datacenter one. */
export function deviceClass(gpu: Pick<ValidationRow['gpu'], 'kind' | 'name'>): DeviceClass {
  switch (gpu.kind) {
    case 'mps':
      return 'apple'
    case 'rocm':
      return 'amd'
    case 'xpu':
      return 'intel'
    case 'cpu':
      return 'cpu'
    default:
      return /GeForce|TITAN/i.test(gpu.name) ? 'consumer' : 'datacenter'
  }
}

export function speedMethod(row: ValidationRow): SpeedMethod {
  if (validationInput(row).model.experts) return 'moe'
  if (!row.settings.lora) return 'full'
  return (row.settings.quant ?? 'none') === 'none' ? 'lora' : 'qlora'
}

export interface SpeedGroup {
  group: string
  rows: number
  sources: number
  medianAbsError: number
  within15: number
}

function summarize(group: string, outcomes: readonly ValidationOutcome[]): SpeedGroup {
  const abs = outcomes.map((o) => Math.abs(o.error))
  return {
    group,
    rows: outcomes.length,
    sources: new Set(outcomes.map((o) => o.source)).size,
    medianAbsError: median(abs),
    within15: abs.filter((e) => e <= 0.15).length / Math.max(1, abs.length),
  }
}

export interface SpeedBreakdown {
  all: SpeedGroup
  byClass: SpeedGroup[]
  byMethod: SpeedGroup[]
}

/**
 * tokens/s errors of the given outcomes, over all of them, per device class and per method (every class and method
 * listed, with 0 rows where the dataset has none).
 */
export function speedBreakdown(outcomes: readonly ValidationOutcome[]): SpeedBreakdown {
  const speed = outcomes.filter((o) => o.metric === 'tokens_per_second')
  return {
    all: summarize('all', speed),
    byClass: DEVICE_CLASSES.map((c) =>
      summarize(
        c,
        speed.filter((o) => deviceClass(o.row.gpu) === c),
      ),
    ),
    byMethod: SPEED_METHODS.map((m) =>
      summarize(
        m,
        speed.filter((o) => speedMethod(o.row) === m),
      ),
    ),
  }
}

const pct = (x: number) => (Number.isNaN(x) ? '–' : `${(x * 100).toFixed(1)}%`)

function table(title: string, groups: readonly SpeedGroup[]): string[] {
  return [
    `| ${title} | rows | sources | median abs error | within 15% |`,
    '| --- | ---: | ---: | ---: | ---: |',
    ...groups.map((g) =>
      g.rows === 0
        ? `| ${g.group} | 0 | 0 | no measured rows | – |`
        : `| ${g.group} | ${g.rows} | ${g.sources} | ${pct(g.medianAbsError)} | ${(g.within15 * 100).toFixed(0)}% |`,
    ),
  ]
}

/** Markdown: the held-out tokens/s errors per device class and per method, as docs/estimate.md shows them. */
export function renderSpeedBreakdown(breakdown: SpeedBreakdown): string {
  return [
    ...table('device class', [...breakdown.byClass, breakdown.all]),
    '',
    ...table('method', [...breakdown.byMethod, breakdown.all]),
  ].join('\n')
}
