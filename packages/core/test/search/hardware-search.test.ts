import { describe, expect, it } from 'vitest'
import { isRigfitError, RigfitError } from '../../src/errors.js'
import { CLOUD_PRESETS } from '../../src/plan/cloud-presets.js'
import type { GpuCatalogEntry } from '../../src/schemas/gpu-catalog.js'
import type { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import type { Advice } from '../../src/schemas/training-plan.js'
import { clusterOfNodes } from '../../src/search/cluster-plan.js'
import { explainedFitError, type FitSearch, fitAlternatives } from '../../src/search/fit-alternatives.js'
import { planMode } from '../../src/search/plan-mode.js'
import { recommendHardware } from '../../src/search/recommend.js'
import type { WhatIfHardware } from '../../src/search/what-if-hardware.js'
import { machine } from '../helpers/machines.js'
import { finetune } from '../helpers/workloads.js'
import { workspacePlugins } from '../helpers/workspace-plugins.js'

const { catalog: bundledCatalog, packs } = workspacePlugins()

// What-if hardware from recorded machines: each catalog GPU that one of them carries, in any count.
const recorded = ['desktop-rtx4090', 'desktop-rtx3060-12gb', 'server-a100-40gb', 'cloud-t4'].map(machine)
const recordedById = new Map(recorded.map((profile) => [profile.gpus[0]?.catalog?.id, profile]))
const catalog = bundledCatalog.filter((entry) => recordedById.has(entry.id))

function withGpus(profile: HardwareProfile, gpus: number): HardwareProfile {
  const gpu = profile.gpus[0] as HardwareProfile['gpus'][number]
  return { ...profile, gpus: Array.from({ length: gpus }, (_, index) => ({ ...gpu, index })) }
}

function recordedFor(entry: GpuCatalogEntry): HardwareProfile {
  const profile = recordedById.get(entry.id)
  if (!profile) throw new RigfitError('hardware', 'E_NOT_RECORDED', `no recorded machine with ${entry.name}`)
  return profile
}

const built: string[] = []
const hardware: WhatIfHardware = {
  catalogGpus: (entry, gpus) => {
    built.push(entry.id)
    return withGpus(recordedFor(entry), gpus)
  },
  cloudPreset: (preset) => {
    throw new RigfitError('hardware', 'E_NOT_RECORDED', `no recorded machine with ${preset.gpu}`)
  },
  otherGpus: (profile, change) => withGpus(change.gpu ? recordedFor(change.gpu) : profile, change.gpus),
  assumptions: (profile) => [
    { id: 'test-assumption', message: `${profile.gpus.length} GPUs`, source: 'profile', expectedGain: null },
  ],
}
const search: FitSearch = { catalog, packs, hardware, packNotices: [] }

const options = { createdAt: 'fixed' }

describe('recommendHardware', () => {
  it('refuses to rank without a time budget, before it builds any hardware', async () => {
    built.length = 0
    const error = await recommendHardware(search, finetune('gpt2'), 'balanced', options, null).catch((e) => e)
    expect(isRigfitError(error) && error.code).toBe('E_RECOMMEND_NEEDS_BUDGET')
    expect(built).toEqual([])
  })

  it('tries every catalog GPU at 1, 2, 4 and 8 and every preset, and ranks only what trains all of it in time', async () => {
    expect(catalog.length).toBe(4)
    for (const budget of [0.05, 2]) {
      const workload = finetune('gpt2', { timeBudgetHours: budget, datasetBytes: 200 * 2 ** 20 })
      const result = await recommendHardware(search, workload, 'balanced', options, 2)
      const all = [...result.ranked, ...result.rejected]
      expect(result.ranked.length).toBeGreaterThan(0)
      expect(result.rejected.some((r) => r.fits)).toBe(budget < 1)
      expect(all).toHaveLength(catalog.length * 4 + CLOUD_PRESETS.length)
      for (const r of result.ranked) {
        expect(r.fits && r.withinBudget && r.hours <= budget).toBe(true)
        expect(r.tokens).toBe(r.requestedTokens)
      }
      for (const [a, b] of result.ranked.slice(1).map((r, i) => [result.ranked[i], r])) {
        expect((a as { hours: number }).hours).toBeLessThanOrEqual((b as { hours: number }).hours)
      }
      for (const r of result.rejected.filter((r) => r.fits)) {
        expect(r.hours).toBeGreaterThan(budget)
        expect(r.tokens).toBeLessThan(r.requestedTokens ?? 0)
      }
      for (const r of all.filter((r) => r.kind === 'gpu' && r.fits)) {
        // The price given is per GPU.
        expect(r.cost).toBeCloseTo(2 * r.gpus * r.hours, 6)
      }
      // Presets without a recorded machine are rejected with the builder's reason, not dropped.
      const presets = all.filter((r) => r.kind === 'cloud')
      expect(presets.every((r) => !r.fits && r.reason?.startsWith('no recorded machine'))).toBe(true)
    }
  })

  it('ranks at least what a shorter budget ranked when the budget grows', async () => {
    const ranked = async (budget: number) => {
      const workload = finetune('gpt2', { timeBudgetHours: budget, datasetBytes: 200 * 2 ** 20 })
      const result = await recommendHardware(search, workload, 'balanced', options, null)
      return new Set(result.ranked.map((r) => r.hardware))
    }
    const short = await ranked(0.04)
    const long = await ranked(0.5)
    expect(short.size).toBeGreaterThan(0)
    expect(long.size).toBeGreaterThan(short.size)
    for (const hardware of short) expect(long.has(hardware)).toBe(true)
  })
})

describe('fitAlternatives', () => {
  const rtx4090 = machine('desktop-rtx4090')
  const asked = finetune('llama-3-8b', { method: 'lora', seq: 2048 })

  it('finds the changes that fit what does not, each planned as the changed command plans it', async () => {
    const failure = await planMode({
      packs,
      profile: rtx4090,
      workload: asked,
      mode: 'balanced',
      options,
      notices: [],
    }).catch((e) => e)
    expect(isRigfitError(failure) && failure.kind).toBe('fit')
    const alternatives = await fitAlternatives(search, rtx4090, asked, 'balanced', options)
    expect(alternatives.length).toBeGreaterThanOrEqual(2)
    expect(alternatives[0]?.flags).toBe('--method qlora')
    for (const alternative of alternatives) {
      expect(alternative.predictedBytes).toBe(alternative.plan.memory.perDevice.total)
      expect(alternative.predictedBytes).toBeLessThanOrEqual(alternative.capacityBytes)
      // Every plan carries the hardware builder's notes on its own profile: the changed GPU count, or the asked one.
      const gpus = /--gpus (\d+)/.exec(alternative.flags)?.[1] ?? '1'
      const note = alternative.plan.warnings.find((w: Advice) => w.id === 'test-assumption')
      expect(note?.message).toBe(`${gpus} GPUs`)
    }
    // One answer per question: at most one shorter sequence and one hardware change.
    expect(alternatives.filter((a) => a.flags.startsWith('--seq')).length).toBeLessThanOrEqual(1)
    expect(alternatives.filter((a) => a.flags.startsWith('--gpu')).length).toBeLessThanOrEqual(1)
    const qlora = await planMode({
      packs,
      profile: rtx4090,
      workload: { ...asked, method: 'qlora' },
      mode: 'balanced',
      options,
      notices: hardware.assumptions(rtx4090),
    })
    expect(qlora).toEqual(alternatives[0]?.plan)

    const explained = explainedFitError(failure, alternatives)
    expect(explained.code).toBe(failure.code)
    for (const alternative of alternatives) expect(explained.suggestion).toContain(alternative.flags)
    const details = explained.details as { alternatives: object[]; nearestPlan: unknown }
    expect(details.alternatives.every((a) => !('plan' in a))).toBe(true)
    expect(details.nearestPlan).toBe(alternatives[0]?.plan)
    expect(explainedFitError(failure, [])).toBe(failure)
  })
})

describe('planMode and clusterOfNodes', () => {
  it("puts the caller's notices first and prices the plan per node and hour", async () => {
    const notice = (id: string): Advice => ({ id, message: id, source: 'generator', expectedGain: null })
    const plan = await planMode({
      packs,
      profile: machine('desktop-rtx4090'),
      workload: finetune('gpt2'),
      mode: 'balanced',
      options: { ...options, pricePerHour: 1.5, notices: [notice('first')] },
      notices: [notice('second')],
    })
    expect(plan.warnings.slice(0, 2).map((w) => w.id)).toEqual(['first', 'second'])
    expect(plan.cost?.total).toBeCloseTo(1.5 * plan.settings.nodes * plan.time.totalHours, 9)
  })

  it('plans a cluster as its weakest node and warns when the nodes differ', () => {
    const fast = machine('desktop-rtx4090')
    const slow = machine('desktop-rtx3060-12gb')
    const error = (() => {
      try {
        return clusterOfNodes([fast], ['a.json'])
      } catch (e) {
        return e
      }
    })()
    expect(isRigfitError(error) && error.code).toBe('E_CLUSTER_SIZE')
    const same = clusterOfNodes([fast, fast], ['a.json', 'b.json'])
    expect(same).toMatchObject({ nodes: 2, heterogeneous: false, warning: null, advice: [] })
    const mixed = clusterOfNodes([fast, slow], ['a.json', 'b.json'])
    expect(mixed.profile).toBe(slow)
    expect(mixed.heterogeneous).toBe(true)
    expect(mixed.warning).toContain('b.json')
    expect(mixed.advice.map((a) => a.id)).toEqual(['heterogeneous-cluster'])
  })
})
