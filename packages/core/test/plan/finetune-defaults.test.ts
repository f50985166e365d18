import { describe, expect, it } from 'vitest'
import { listModels } from '../../src/model/index.js'
import { MIN_FINETUNE_STEPS } from '../../src/plan/batch-target.js'
import { MODES } from '../../src/plan/modes.js'
import { WORKLOAD_SCHEMA_VERSION, type Workload } from '../../src/schemas/workload.js'
import { machine, planOrNull } from '../helpers/machines.js'

const MACHINES = ['desktop-rtx4090', 'server-4x-a100-40gb', 'dgx-8x-h100']
const METHODS = ['auto', 'full', 'lora', 'qlora'] as const
// From a few thousand short examples to a large instruction set.
const DATASET_TOKENS = [2e6, 20e6, 500e6]

function finetune(modelId: string, method: Workload['method'], datasetTokens: number): Workload {
  const model = listModels().find((candidate) => candidate.id === modelId) ?? null
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: 'finetune',
    model,
    method,
    frozenModels: [],
    datasetBytes: null,
    datasetTokens,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: 1024,
    nodes: 1,
  }
}

describe('fine-tune defaults an expert would pick', () => {
  const models = listModels()
    .filter((model) => model.modelType !== 'bert')
    .map((model) => model.id)

  for (const name of MACHINES) {
    it(`${name}: fine-tune batches, steps and learning rates across the catalog`, async () => {
      const profile = machine(name)
      let checked = 0
      for (const model of models) {
        for (const method of METHODS) {
          for (const tokens of DATASET_TOKENS) {
            for (const mode of MODES) {
              const plan = await planOrNull(profile, finetune(model, method, tokens), mode)
              if (!plan) continue
              checked += 1
              const s = plan.settings
              const where = `${model} ${method} ${tokens} ${mode}: batch ${s.effectiveBatch}, ${plan.time.steps} steps`
              const smallest = s.microBatch * s.gpus * s.nodes
              // A fine-tune's step is 16-128 sequences, not a pretraining-size batch (accumulation rounds to the
              // nearest whole step of micro-batches, up to half of one more)...
              expect(s.effectiveBatch, where).toBeLessThanOrEqual(Math.max(128 + smallest / 2, smallest))
              // ...and it makes a few hundred steps when the data holds them at the smallest batch it may take.
              if (
                plan.tokens.binding === 'dataset' &&
                tokens >= MIN_FINETUNE_STEPS * 1024 * Math.max(8, smallest)
              ) {
                expect(plan.time.steps, where).toBeGreaterThanOrEqual(MIN_FINETUNE_STEPS * 0.66)
              }
              const params = plan.params.total
              const lr = s.learningRate
              if (s.method === 'full') {
                expect(lr, where).toBe(params < 1e9 ? 5e-5 : params >= 20e9 ? 1e-5 : 2e-5)
              } else {
                expect(lr, where).toBe(params >= 20e9 ? 1e-4 : 2e-4)
                const reason = plan.trace.find((entry) => entry.setting === 'lora')?.reason ?? ''
                expect(reason, where).toContain(`alpha ${2 * (s.lora?.rank ?? 0)}`)
                expect(reason, where).toMatch(/LoRA paper|QLoRA/)
              }
            }
          }
        }
      }
      expect(checked).toBeGreaterThan(20)
    })
  }
})
