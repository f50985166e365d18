import { beforeAll, describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { FORMAT_NAMES } from '../src/format-names.js'
import { FORMATS } from '../src/registry.js'
import { exportMismatches } from './helpers/export-fidelity.js'
import { machineProfile, type SweptPlan, sweepPlans } from './helpers/planner-plan.js'
import { readBack } from './helpers/read-back.js'
import { behaviourMismatches } from './helpers/what-runs.js'

describe('every export means what the plan means, read back from the written files', () => {
  let plans: SweptPlan[] = []
  beforeAll(async () => {
    plans = await sweepPlans()
  })

  it('sweeps machines x workloads x modes x nodes with full, LoRA, QLoRA and pretraining plans', () => {
    const methods = new Set(plans.map((p) => `${p.plan.workload.kind}:${p.plan.settings.method}`))
    expect([...methods].sort()).toEqual(['finetune:full', 'finetune:lora', 'finetune:qlora', 'pretrain:full'])
    expect(new Set(plans.map((p) => p.plan.settings.nodes))).toEqual(new Set([1, 2]))
    expect(plans.length).toBeGreaterThan(300)
  })

  it.each([...FORMAT_NAMES])(
    '%s: the files say the plan, and what the tools run with them is the plan',
    (format) => {
      const failures: string[] = []
      let exported = 0
      for (const { label, plan, machine } of plans) {
        if (FORMATS[format].unsupportedReason(plan) !== null) continue
        const result = exportPlan(plan, { format })
        exported += 1
        const cpus = machineProfile(machine).cpu.usableCores
        const problems = [
          ...exportMismatches(result.plan, format, readBack(format, result.files)),
          ...behaviourMismatches(result.plan, format, result.files, cpus).map((p) => `runs: ${p}`),
        ]
        if (problems.length > 0) failures.push(`${label}: ${problems.join('; ')}`)
      }
      console.log(
        `plan meaning ${format}: ${exported} exports read back through the behaviour tables, ${failures.length} mismatches`,
      )
      expect(failures.slice(0, 5)).toEqual([])
      expect(failures.length).toBe(0)
      expect(exported).toBeGreaterThan(100)
    },
  )

  it('sweeps pure-half plans too, and a ZeRO plan of pure half is planned as DeepSpeed trains it', () => {
    const pure = plans.filter((p) => p.label.includes('--precision'))
    expect(pure.length).toBeGreaterThan(20)
    for (const { plan } of pure)
      if (plan.settings.sharding.startsWith('zero')) expect(plan.settings.precision).toMatch(/-mixed$/)
  })

  it('LoRA and QLoRA plans are exported in every format that can run them, never as full training', () => {
    const adapted = plans.filter((p) => p.plan.settings.method !== 'full')
    expect(adapted.length).toBeGreaterThan(50)
    for (const { plan } of adapted.slice(0, 30)) {
      for (const format of FORMAT_NAMES) {
        if (FORMATS[format].unsupportedReason(plan) !== null) continue
        const facts = readBack(format, exportPlan(plan, { format }).files)
        expect(facts.lora?.r, `${format} rank`).toBe(plan.settings.lora?.rank)
      }
    }
  })
})
