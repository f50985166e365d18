import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CORE_PACK_ROOT, loadCorePack } from '../../src/node/core-pack.js'
import { decide } from '../../src/rules/decide.js'
import { deriveFacts } from '../../src/rules/derive-facts.js'
import { decisionsToTrace, explainedSettings, explainSetting, traceFor } from '../../src/rules/explain.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import { TraceEntry } from '../../src/schemas/training-plan.js'

const profile = HardwareProfile.parse(
  JSON.parse(readFileSync(`${CORE_PACK_ROOT}fixtures/container-cpu-4core.json`, 'utf8')),
)

describe('explaining decisions', () => {
  it('explains a capped setting with its deciding rule and cap', async () => {
    const decisions = await decide([loadCorePack()], deriveFacts(profile, null, 'balanced'))
    const threads = explainSetting(decisions, 'threads')
    expect(threads).toMatchObject({
      value: 4,
      decision: { cappedFrom: 32, provenance: { rule: 'core-threads-physical-cores' } },
      cap: { max: 4 },
    })
    expect(explainSetting(decisions, 'sharding')).toMatchObject({
      value: null,
      decision: null,
      cap: null,
      forbids: [],
    })
    expect(explainedSettings(decisions)).toContain('threads')
    expect(explainedSettings(decisions)).not.toContain('sharding')
  })

  it('turns decisions into plan trace entries', async () => {
    const decisions = await decide([loadCorePack()], deriveFacts(profile, null, 'balanced'))
    const trace = decisionsToTrace(decisions)
    for (const entry of trace) expect(TraceEntry.safeParse(entry).success).toBe(true)
    const threads = trace.find((entry) => entry.setting === 'threads')
    expect(threads).toMatchObject({ value: 4, pack: 'core', layer: 'core' })
    expect(threads?.reason).toContain('lowered from 32 by core-threads-cap-usable-cores')
  })

  it('finds trace entries by setting name or plan path', () => {
    const entry = (setting: string) => ({
      setting,
      value: true,
      rule: 'r',
      pack: 'p',
      layer: 'vendor' as const,
      facts: {},
      reason: 'x',
    })
    const trace = [entry('compile'), entry('dataloader.workers'), entry('microBatch')]
    expect(traceFor(trace, 'compile.enabled').map((e) => e.setting)).toEqual(['compile'])
    expect(traceFor(trace, 'dataloaderWorkers').map((e) => e.setting)).toEqual(['dataloader.workers'])
    expect(traceFor(trace, 'MICROBATCH')).toHaveLength(1)
    expect(traceFor(trace, 'seq')).toEqual([])
  })
})
