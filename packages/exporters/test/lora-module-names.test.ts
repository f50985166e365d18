import { MODEL_CATALOG, type ModelSpec, resolveLoraTargets } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { loraTargetModules } from '../src/lora-modules.js'

const TARGETS = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] as const

describe('adapter_config.json target_modules and --lora-targets agree', () => {
  it('reads back every catalog model’s exported module names as the targets they were written for', () => {
    for (const model of MODEL_CATALOG as ModelSpec[]) {
      for (const target of TARGETS) {
        const modules = loraTargetModules(model, [target], () => {})
        // A regular expression (BERT's MLP output) is not a name list --lora-targets takes.
        if (typeof modules === 'string' || modules.length === 0) continue
        const back = resolveLoraTargets(modules.join(','), model)
        // A fused module adapts its siblings too; the target itself is always among them.
        expect(back, `${model.id} ${target} -> ${modules.join(',')}`).toContain(target)
      }
    }
  })
})
