import {
  type ActivationContext,
  blockActivationBytes,
  type LoraTarget,
  modelSpecFromHfConfig,
} from '@rigfit/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { measureWith } from './helpers/calibrate-script.js'
import { assertEngines, missingEngines, OPTIONAL, pythonWithTorch } from './helpers/engines.js'

const python = pythonWithTorch()
const missing = missingEngines('saved-activations', [
  { name: 'python3 with torch (python3-torch)', present: python !== undefined },
])

interface Settings {
  hidden: number
  heads: number
  kv_heads: number
  seq: number
  micro_batch: number
  precision: 'bf16-true' | 'fp32'
  lora_rank?: number
  lora_targets?: string
  adapter_dtype?: 'model' | 'fp32'
  experts?: number
  top_k?: number
}
interface Measured {
  config: Record<string, unknown>
  settings: Settings
  savedBytes: number
}

/** What PyTorch keeps for backward of one block of the calibration decoder, for each configuration. */
function measure(configs: Settings[]): Measured[] {
  return measureWith<Measured>(python as string, 'saved_activations.py', configs, 240_000)
}

/** rigfit's prediction of the same bytes: per token of the micro-batch, times its tokens. */
function predicted(row: Measured): number {
  const s = row.settings
  const spec = modelSpecFromHfConfig(row.config, 'saved-activations')
  const e = s.precision === 'fp32' ? 4 : 2
  const lora = s.lora_rank
    ? { rank: s.lora_rank, targets: (s.lora_targets ?? 'q,v').split(',') as LoraTarget[], dropout: 0 }
    : null
  const ctx: ActivationContext = {
    elementBytes: e,
    residualBytes: e,
    attention: 'eager',
    fullTraining: lora === null,
    lora,
    adapterBytes: lora && s.adapter_dtype === 'fp32' ? 4 : e,
  }
  return s.micro_batch * s.seq * blockActivationBytes(spec, ctx, s.seq)
}

// Distinct widths, since rows are grouped by them: multi-head, grouped-query, and a Mixtral-style mixture of experts.
const SHAPES = [
  { hidden: 256, heads: 4, kv_heads: 4 },
  { hidden: 384, heads: 6, kv_heads: 2 },
  { hidden: 320, heads: 5, kv_heads: 5, experts: 4, top_k: 2 },
]
const TARGETS = ['q', 'q,v', 'q,k,v,o', 'gate,up,down', 'q,k,v,o,gate,up,down']

function grid(): Settings[] {
  const configs: Settings[] = []
  for (const shape of SHAPES) {
    for (const precision of ['bf16-true', 'fp32'] as const) {
      const base = { ...shape, seq: 64, micro_batch: 2, precision }
      configs.push(base)
      for (const lora_targets of TARGETS) {
        for (const adapter_dtype of ['model', 'fp32'] as const) {
          configs.push({ ...base, lora_rank: 8, lora_targets, adapter_dtype })
        }
      }
    }
  }
  return configs
}

describe.skipIf(OPTIONAL && missing.length > 0)(
  'activation memory against PyTorch (saved-tensor hooks)',
  () => {
    let rows: Measured[] = []
    beforeAll(() => {
      assertEngines(missing)
      rows = measure(grid())
    }, 300_000)

    // PyTorch keeps a few tensors the model leaves out, the same whatever trains (rotary tables, the causal mask,
    // and in PyTorch 1.x mean()'s saved input); differences between configurations cancel them, so those are
    // compared exactly.
    it('predicts what a LoRA adds or saves against another target set, for adapters in the base type and in fp32', () => {
      for (const shape of SHAPES) {
        for (const precision of ['bf16-true', 'fp32']) {
          for (const adapterDtype of ['model', 'fp32']) {
            const same = rows.filter(
              (r) =>
                r.settings.hidden === shape.hidden &&
                r.settings.precision === precision &&
                r.settings.lora_rank &&
                r.settings.adapter_dtype === adapterDtype,
            )
            const reference = same.find((r) => r.settings.lora_targets === 'q') as Measured
            for (const row of same) {
              const where = `${shape.hidden} ${precision} ${adapterDtype} ${row.settings.lora_targets}`
              expect(row.savedBytes - reference.savedBytes, where).toBe(predicted(row) - predicted(reference))
            }
          }
        }
      }
    })

    it("predicts PEFT's fp32 adapters: one fp32 input copy per adapted layer on a bf16 base, nothing on an fp32 one", () => {
      for (const row of rows.filter((r) => r.settings.adapter_dtype === 'fp32')) {
        const s = row.settings
        const model = rows.find(
          (r) =>
            r.settings.hidden === s.hidden &&
            r.settings.precision === s.precision &&
            r.settings.lora_targets === s.lora_targets &&
            r.settings.adapter_dtype === 'model',
        ) as Measured
        const where = `${s.hidden} ${s.precision} ${s.lora_targets}`
        const measuredExtra = row.savedBytes - model.savedBytes
        expect(measuredExtra, where).toBe(predicted(row) - predicted(model))
        if (s.precision === 'fp32') expect(measuredExtra, where).toBe(0)
        else expect(measuredExtra, where).toBeGreaterThan(0)
      }
    })

    it('predicts what full training keeps beyond a LoRA of the query projection, experts and router included', () => {
      for (const shape of SHAPES) {
        for (const precision of ['bf16-true', 'fp32']) {
          const at = (r: Measured) => r.settings.hidden === shape.hidden && r.settings.precision === precision
          const full = rows.find((r) => at(r) && !r.settings.lora_rank) as Measured
          const lora = rows.find(
            (r) => at(r) && r.settings.lora_targets === 'q' && r.settings.adapter_dtype === 'model',
          ) as Measured
          expect(full.savedBytes - lora.savedBytes, `${shape.hidden} ${precision}`).toBe(
            predicted(full) - predicted(lora),
          )
        }
      }
    })
  },
)
