import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { FORMAT_NAMES } from '../src/format-names.js'
import { FORMATS } from '../src/registry.js'
import { type SweptPlan, sweepPlans } from './helpers/planner-plan.js'
import { readOptimizer } from './helpers/read-optimizer.js'

let plans: SweptPlan[] = []

describe('every format writes the optimizer the plan chose for its method and origin', () => {
  it('plans pretraining, full fine-tuning and adapters with their own AdamW settings', async () => {
    plans = await sweepPlans()
    let adapters = 0
    for (const { label, plan } of plans) {
      const o = plan.settings.optimization
      expect(o, label).toBeDefined()
      if (!o) continue
      if (plan.settings.method !== 'full') {
        adapters += 1
        // QLoRA practice (qlora.py): betas 0.9/0.999, no weight decay, clipping 0.3, 3% warm-up.
        expect([o.beta1, o.beta2, o.weightDecay, o.gradClip], label).toEqual([0.9, 0.999, 0, 0.3])
        expect(plan.settings.learningRate, label).toBe(plan.params.total >= 20e9 ? 1e-4 : 2e-4)
      } else if (plan.workload.kind === 'pretrain') {
        expect([o.beta1, o.beta2, o.weightDecay, o.gradClip], label).toEqual([0.9, 0.95, 0.1, 1])
      } else {
        expect([o.beta1, o.beta2, o.weightDecay], label).toEqual([0.9, 0.999, 0])
      }
      const ratio = plan.workload.kind === 'pretrain' ? 0.02 : 0.03
      expect(o.warmupSteps, label).toBe(Math.max(1, Math.min(2000, Math.round(plan.time.steps * ratio))))
      // bitsandbytes layers break torch.compile's graph on a stack that does not say otherwise.
      if (plan.settings.quant !== 'none') expect(plan.settings.compile.enabled, label).toBe(false)
    }
    expect(adapters).toBeGreaterThan(50)
  })

  it.each([...FORMAT_NAMES])('%s: the written files, read back, ask for that optimizer', (format) => {
    const failures: string[] = []
    let exported = 0
    for (const { label, plan } of plans) {
      if (FORMATS[format].unsupportedReason(plan) !== null) continue
      if (plan.settings.optimizer !== 'adamw') continue
      const files = exportPlan(plan, { format }).files
      exported += 1
      const read = readOptimizer(format, files)
      const o = plan.settings.optimization
      const want = o ? { lr: plan.settings.learningRate, ...o } : null
      if (JSON.stringify(read) !== JSON.stringify(want && read ? pick(want, read) : want))
        failures.push(`${label}: wrote ${JSON.stringify(read)}, planned ${JSON.stringify(want)}`)
    }
    console.log(`optimizer ${format}: ${exported} exports read back, ${failures.length} mismatches`)
    expect(failures.slice(0, 3)).toEqual([])
    expect(exported).toBeGreaterThan(100)
  })
})

/** The planned values in the order the reader returns them. */
function pick(want: Record<string, number>, read: object): Record<string, number> {
  return Object.fromEntries(Object.keys(read).map((key) => [key, want[key] as number]))
}
