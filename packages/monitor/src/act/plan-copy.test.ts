import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TrainingPlan } from '@rigfit/core'
import { assertPlanConsistent } from '@rigfit/exporters'
import { describe, expect, it } from 'vitest'
import { replanForGpus } from './gpu-failover.js'
import { initialSettings } from './launch-settings.js'
import { nextOomSettings } from './oom-ladder.js'
import { planForLaunch, writePlanCopy } from './plan-copy.js'

const plan = TrainingPlan.parse(
  JSON.parse(
    readFileSync(
      new URL('../../test/fixtures/plans/rtx4090-gpt2-124m-balanced.json', import.meta.url),
      'utf8',
    ),
  ),
)
const settings = initialSettings(plan, {}, { device: 'cpu', gpus: 0 }) as NonNullable<
  ReturnType<typeof initialSettings>
>

describe('planForLaunch', () => {
  it('writes the halved micro-batch in and scales the activation memory with it', () => {
    const step = nextOomSettings(settings, plan.hardware.computeCapability)
    if (!('settings' in step)) throw new Error('expected a rung')
    const next = planForLaunch(plan, step.settings, step.changes)
    expect(next.settings).toMatchObject({ microBatch: 4, gradAccum: 4, effectiveBatch: 16 })
    const before = plan.memory.perDevice
    const after = next.memory.perDevice
    expect(after.activations).toBe(before.activations / 2)
    expect(after.logits).toBe(before.logits / 2)
    expect(before.total - after.total).toBe(before.activations / 2 + before.logits / 2)
    expect(after.weights).toBe(before.weights)
    expect(next.warnings.map((w) => w.source)).toEqual(['rigfit monitor'])
    expect(() => TrainingPlan.parse(next)).not.toThrow()
    assertPlanConsistent(next, 'copy')
  })

  it('keeps a CPU fallback plan consistent and says the prediction was not recomputed', () => {
    const cpu = replanForGpus(settings, 0)
    const next = planForLaunch(plan, cpu.settings, cpu.changes)
    expect(next.settings).toMatchObject({
      device: 'cpu',
      gpus: 0,
      strategy: 'cpu',
      precision: 'fp32',
      tf32: false,
      sharding: 'none',
    })
    expect(next.warnings.at(-1)?.message).toMatch(/not recomputed.*precision, device count/)
    assertPlanConsistent(next, 'copy')
  })

  it('writes the copy atomically into the log directory, one file per attempt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-plan-copy-'))
    const path = await writePlanCopy(dir, 2, plan)
    expect(path).toBe(join(dir, 'plan.attempt-2.json'))
    expect(TrainingPlan.parse(JSON.parse(readFileSync(path, 'utf8')))).toEqual(plan)
    expect(readdirSync(dir)).toEqual(['plan.attempt-2.json'])
  })
})
