import { describe, expect, it } from 'vitest'
import { listModels } from '../../src/model/index.js'
import { exampleSequence } from '../../src/plan/candidates.js'
import { MODE_BUDGETS, MODES } from '../../src/plan/modes.js'
import { WORKLOAD_SCHEMA_VERSION, type Workload } from '../../src/schemas/workload.js'
import { machine, planOrNull } from '../helpers/machines.js'

const MACHINES = ['desktop-rtx4090', 'server-4x-a100-40gb']
// Short chat turns, instruction pairs of about 1k tokens, long documents beyond every mode's range.
const EXAMPLE_TOKENS = [90, 700, 1000, 3000, 6000]
const MODELS = ['gpt2', 'llama-3.2-1b', 'qwen2.5-0.5b', 'llama-3.1-8b', 'mistral-7b']

function finetune(modelId: string, method: Workload['method'], tokensPerExample: number): Workload {
  const model = listModels().find((candidate) => candidate.id === modelId)
  if (!model) throw new Error(`no catalog model ${modelId}`)
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: 'finetune',
    model,
    method,
    frozenModels: [],
    datasetBytes: null,
    datasetTokens: Math.round(20_000 * tokensPerExample),
    tokensPerExample,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: null,
    nodes: 1,
  }
}

describe('a fine-tune trains sequences that hold its examples', () => {
  it('the example sequence is the next power of two, within the model context, and only for fine-tunes', () => {
    const llama = finetune('llama-3.1-8b', 'lora', 700)
    expect(exampleSequence(llama)).toBe(1024)
    expect(exampleSequence({ ...llama, tokensPerExample: 1024 })).toBe(1024)
    expect(exampleSequence({ ...llama, tokensPerExample: 1025 })).toBe(2048)
    expect(exampleSequence({ ...llama, tokensPerExample: 20 })).toBe(128)
    expect(exampleSequence({ ...llama, tokensPerExample: null })).toBeNull()
    expect(exampleSequence({ ...llama, kind: 'pretrain' })).toBeNull()
    // GPT-2 learned 1024 positions: longer examples are cut at its context, not planned beyond it.
    expect(exampleSequence(finetune('gpt2', 'full', 6000))).toBe(1024)
  })

  for (const name of MACHINES) {
    it(`${name}: every plan's sequence holds an average example, or nothing is planned`, async () => {
      const profile = machine(name)
      let checked = 0
      for (const model of MODELS) {
        for (const method of ['auto', 'lora'] as const) {
          for (const tokens of EXAMPLE_TOKENS) {
            const workload = finetune(model, method, tokens)
            const floor = exampleSequence(workload) as number
            for (const mode of MODES) {
              const plan = await planOrNull(profile, workload, mode)
              if (!plan) continue
              checked += 1
              const where = `${model} ${method} ${tokens} tokens/example ${mode}`
              expect(plan.settings.seq, where).toBeGreaterThanOrEqual(floor)
              // Never longer than both the mode's range and the examples need.
              expect(plan.settings.seq, where).toBeLessThanOrEqual(
                Math.max(MODE_BUDGETS[mode].seqRange[1], floor),
              )
              if (floor > MODE_BUDGETS[mode].seqRange[1]) expect(plan.settings.seq, where).toBe(floor)
              const seqTrace = plan.trace.filter((entry) => entry.setting === 'seq').at(-1)
              expect(seqTrace?.reason, where).toMatch(new RegExp(`never below ${floor}`))
            }
          }
        }
      }
      expect(checked).toBeGreaterThan(40)
    })
  }
})
