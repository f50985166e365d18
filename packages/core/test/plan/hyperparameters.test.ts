import { describe, expect, it } from 'vitest'
import { generateModelShape, listModels } from '../../src/model/index.js'
import { MIN_FINETUNE_BATCH, MIN_FINETUNE_STEPS } from '../../src/plan/batch-target.js'
import { MODES } from '../../src/plan/modes.js'
import { pretrainRecipe } from '../../src/plan/scaling-recipe.js'
import { WORKLOAD_SCHEMA_VERSION, type Workload } from '../../src/schemas/workload.js'
import { machine, planOrNull } from '../helpers/machines.js'

const MACHINES = ['desktop-rtx4090', 'desktop-rtx3060-12gb', 'server-4x-a100-40gb', 'dgx-8x-h100']
const METHODS = ['full', 'lora', 'qlora'] as const
// A few thousand short examples, and a mid-size instruction set of 1k-token examples.
const DATASETS = [
  { tokens: 2000 * 256, perExample: 256 },
  { tokens: 50e6, perExample: 1024 },
]

function workload(partial: Partial<Workload>): Workload {
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: 'finetune',
    model: null,
    method: 'auto',
    frozenModels: [],
    datasetBytes: null,
    datasetTokens: null,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: null,
    nodes: 1,
    ...partial,
  }
}

describe('hyperparameters by method and origin, over the catalog', () => {
  const models = listModels().filter((model) => model.kind === 'decoder')

  for (const name of MACHINES) {
    it(`${name}: fine-tunes keep the batch floor, warn when the data gives too few steps, and train with their method's optimizer`, async () => {
      const profile = machine(name)
      let checked = 0
      for (const model of models) {
        for (const method of METHODS) {
          for (const data of DATASETS) {
            for (const mode of MODES) {
              const w = workload({
                model,
                method,
                datasetTokens: data.tokens,
                tokensPerExample: data.perExample,
              })
              const plan = await planOrNull(profile, w, mode)
              if (!plan) continue
              checked += 1
              const s = plan.settings
              const where = `${model.id} ${method} ${data.tokens} ${mode}: ${s.effectiveBatch} x ${s.seq}, ${plan.time.steps} steps`
              expect(s.effectiveBatch, where).toBeGreaterThanOrEqual(MIN_FINETUNE_BATCH)
              // Sequences hold an example and no more than the data needs for the steps.
              expect(s.seq, where).toBeGreaterThanOrEqual(Math.min(data.perExample, model.maxPositions))
              const few = plan.warnings.find((warning) => warning.id === 'finetune-few-steps')
              if (plan.time.steps < MIN_FINETUNE_STEPS) {
                expect(few?.message, where).toContain(`${plan.time.steps} optimizer steps`)
                const epochs = Number(/--epochs (\d+)/.exec(few?.message ?? '')?.[1])
                // The passes it names make the steps at this batch, and one fewer would not.
                expect((epochs * data.tokens) / (s.effectiveBatch * s.seq), where).toBeGreaterThanOrEqual(
                  MIN_FINETUNE_STEPS,
                )
                expect(((epochs - 1) * data.tokens) / (s.effectiveBatch * s.seq), where).toBeLessThan(
                  MIN_FINETUNE_STEPS,
                )
              } else {
                expect(few, where).toBeUndefined()
              }
              const o = s.optimization
              if (s.method === 'full') {
                expect([o?.beta2, o?.weightDecay], where).toEqual([0.999, 0])
              } else {
                expect([o?.beta1, o?.beta2, o?.weightDecay, o?.gradClip], where).toEqual([0.9, 0.999, 0, 0.3])
                expect(s.learningRate, where).toBe(plan.params.total >= 20e9 ? 1e-4 : 2e-4)
              }
              expect(o?.warmupSteps, where).toBe(Math.max(1, Math.round(plan.time.steps * 0.03)))
              if (s.quant !== 'none') expect(s.compile.enabled, where).toBe(false)
            }
          }
        }
      }
      console.log(`hyperparameters ${name}: ${checked} fine-tune plans checked`)
      expect(checked).toBeGreaterThan(100)
    })
  }

  it('pretraining takes the DeepSeek LLM batch and learning rate for its compute, over sizes, machines and modes', async () => {
    let checked = 0
    for (const name of MACHINES) {
      for (const params of [null, 125e6, 1e9, 7e9]) {
        for (const mode of MODES) {
          const model = params === null ? null : generateModelShape(params)
          const plan = await planOrNull(
            machine(name),
            workload({ kind: 'pretrain', model, method: 'full', targetTokens: params ? params * 20 : null }),
            mode,
          )
          if (!plan) continue
          checked += 1
          const s = plan.settings
          const where = `${name} ${params ?? 'mode range'} ${mode}: ${s.effectiveBatch} x ${s.seq}, lr ${s.learningRate}`
          const recipe = pretrainRecipe(plan.model, s.seq, plan.tokens.budget)
          // Written with two significant figures, as configs write rates.
          expect(s.learningRate, where).toBe(Number(recipe.learningRate.toPrecision(2)))
          expect(s.optimization, where).toMatchObject({
            beta1: 0.9,
            beta2: 0.95,
            weightDecay: 0.1,
            gradClip: 1,
          })
          // The batch of a named size sits within a factor of two of the law's (rounded to a power of two, then
          // to whole accumulation steps), unless the GPUs' smallest step is already larger.
          const ranks = Math.max(1, s.gpus) * s.nodes
          if (
            params !== null &&
            plan.tokens.binding === 'target' &&
            recipe.batchTokens / s.seq >= 2 * ranks
          ) {
            const ratio = (s.effectiveBatch * s.seq) / recipe.batchTokens
            expect(ratio, where).toBeGreaterThan(0.5)
            expect(ratio, where).toBeLessThan(2)
          }
        }
      }
    }
    console.log(`hyperparameters: ${checked} pretraining plans checked`)
    expect(checked).toBeGreaterThan(30)
  })
})
