import { describe, expect, it } from 'vitest'
import { isRigfitError } from '../../src/errors.js'
import { findCatalogModel } from '../../src/model/index.js'
import { MODES } from '../../src/plan/modes.js'
import { PIN_TRACE_SETTING, type PinName, pinEntries } from '../../src/plan/pins.js'
import type { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import type { TrainingPlan } from '../../src/schemas/training-plan.js'
import { type SettingPins, WORKLOAD_SCHEMA_VERSION, type Workload } from '../../src/schemas/workload.js'
import { MACHINES as machines, planOrNull as plan } from '../helpers/machines.js'

function workload(model: string | null, pins: SettingPins, extra: Partial<Workload> = {}): Workload {
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: model ? 'finetune' : 'pretrain',
    model: model ? (findCatalogModel(model) ?? null) : null,
    method: 'auto',
    frozenModels: [],
    datasetBytes: null,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: 512,
    nodes: 1,
    pins,
    ...extra,
  }
}

/** The plan's value for a pin, in the pin's terms. */
function planned(plan: TrainingPlan, name: PinName): unknown {
  const s = plan.settings
  if (name === 'loraRank') return s.lora?.rank
  if (name === 'loraTargets') return s.lora?.targets
  return s[name]
}

const PIN_SETS: SettingPins[] = [
  { microBatch: 3 },
  { gradAccum: 5 },
  { microBatch: 1, gradAccum: 7 },
  { precision: 'fp32' },
  { precision: 'fp16-mixed' },
  { optimizer: 'sgd-momentum' },
  { gradCheckpointing: true },
  { gradCheckpointing: false },
  { attention: 'eager' },
  { loraRank: 4, loraTargets: ['q', 'k', 'v', 'o', 'gate'] },
  { loraTargets: ['down'] },
  { quant: 'nf4' },
  { quant: 'int8', loraRank: 32 },
  { microBatch: 2, gradCheckpointing: true, optimizer: 'adamw', attention: 'sdpa', loraRank: 8 },
]

describe('pinned settings are kept in every mode, on every machine', () => {
  for (const { name, profile } of machines) {
    it(`${name}: every plan that fits keeps every pin, traced to its flag`, async () => {
      let kept = 0
      for (const pins of PIN_SETS) {
        for (const mode of MODES) {
          const result = await plan(profile, workload('llama-3.2-1b', pins), mode)
          if (result === null) continue
          kept += 1
          for (const [pin, value] of pinEntries(pins)) {
            expect(planned(result, pin), `${mode} ${JSON.stringify(pins)}: ${pin}`).toEqual(value)
            const traced = result.trace.find((entry) => entry.setting === PIN_TRACE_SETTING[pin])
            expect(traced?.pack, `${pin} is traced to the command line`).toBe('command-line')
            expect(traced?.layer).toBe('user')
          }
          if (pins.quant === 'nf4') expect(result.settings.method).toBe('qlora')
          if (pins.loraRank !== undefined || pins.loraTargets !== undefined)
            expect(result.settings.method).not.toBe('full')
        }
      }
      // The pins are small enough that most of them fit on every machine with a GPU or a CPU.
      expect(kept).toBeGreaterThan(PIN_SETS.length)
    })
  }

  it('keeps a pinned micro-batch above the mode range and an accumulation the target batch would not pick', async () => {
    const server = machines.find((m) => m.name === 'dgx-8x-h100')?.profile as HardwareProfile
    for (const mode of MODES) {
      const result = await plan(server, workload('llama-3.2-1b', { microBatch: 24, gradAccum: 3 }), mode)
      expect(result?.settings.microBatch).toBe(24)
      expect(result?.settings.gradAccum).toBe(3)
      expect(result?.settings.effectiveBatch).toBe(24 * 3 * (result?.settings.gpus ?? 0))
    }
  })

  it('pins sharding and offload on a multi-GPU server', async () => {
    const server = machines.find((m) => m.name === 'server-4x-a100-40gb')?.profile as HardwareProfile
    for (const pins of [{ sharding: 'fsdp' }, { sharding: 'zero3', offload: 'all' }] as SettingPins[]) {
      for (const mode of MODES) {
        const result = await plan(server, workload('qwen2.5-7b', pins), mode)
        expect(result, `${mode} ${JSON.stringify(pins)}`).not.toBeNull()
        expect(result?.settings.sharding).toBe(pins.sharding)
        if (pins.offload) expect(result?.settings.offload).toBe(pins.offload)
      }
    }
  })
})

describe('pins that contradict each other are usage errors naming both', () => {
  const profile = machines.find((m) => m.name === 'desktop-rtx4090')?.profile as HardwareProfile
  const cases: [string, Workload, RegExp][] = [
    [
      'adapters on a full fine-tune',
      { ...workload('llama-3.2-1b', { loraRank: 8 }), method: 'full' },
      /--lora-rank 8.*--method full/,
    ],
    [
      'NF4 with plain LoRA',
      { ...workload('llama-3.2-1b', { quant: 'nf4' }), method: 'lora' },
      /--quant nf4.*--method lora/,
    ],
    ['adapters when pretraining', workload(null, { loraRank: 8 }), /--lora-rank 8.*pretraining/],
    [
      'offload without an engine',
      workload('llama-3.2-1b', { offload: 'optimizer', sharding: 'none' }),
      /--offload optimizer.*--sharding none/,
    ],
    [
      'parameter offload with ZeRO-2',
      workload('llama-3.2-1b', { offload: 'all', sharding: 'zero2' }),
      /--offload all.*ZeRO-3/,
    ],
    [
      'micro-batch x accumulation against the target batch',
      workload('llama-3.2-1b', { microBatch: 2, gradAccum: 2 }, { targetEffectiveBatch: 16 }),
      /--micro-batch 2 x --grad-accum 2.*--target-batch 16/,
    ],
  ]
  for (const [label, work, message] of cases) {
    it(label, async () => {
      const error = await plan(profile, work, 'balanced').catch((caught: unknown) => caught)
      expect(isRigfitError(error) && error.kind).toBe('usage')
      expect((error as Error).message).toMatch(message)
    })
  }
})
