import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { findCatalogModel } from '../../src/model/index.js'
import { loadCorePack } from '../../src/node/core-pack.js'
import { generatePlan } from '../../src/plan/generate.js'
import { decide } from '../../src/rules/decide.js'
import { deriveFacts } from '../../src/rules/derive-facts.js'
import type { Mode } from '../../src/schemas/common.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import { WORKLOAD_SCHEMA_VERSION, type Workload } from '../../src/schemas/workload.js'
import { finetune } from '../helpers/workloads.js'

const machine = (name: string) =>
  HardwareProfile.parse(
    JSON.parse(readFileSync(new URL(`../fixtures/machines/${name}.json`, import.meta.url), 'utf8')),
  )
const GIB = 2 ** 30
const withRam = (profile: HardwareProfile, gib: number): HardwareProfile => ({
  ...profile,
  memory: { ...profile.memory, totalBytes: gib * GIB, availableBytes: gib * GIB, usableBytes: gib * GIB },
})

/** A plan with the core rule pack's decisions, as `rigfit plan` makes it without vendor packs. */
async function plan(profile: HardwareProfile, workload: Workload, mode: Mode) {
  const decisions = await decide([loadCorePack()], deriveFacts(profile, workload, mode))
  return generatePlan({ profile, workload, mode, decisions, options: { createdAt: 'fixed' } })
}

const ladderStep = (p: Awaited<ReturnType<typeof plan>>) =>
  p.trace.find((t) => t.setting === 'seq')?.facts.ladderStep

describe('the lever ladder, cheapest lever first', () => {
  it('RTX 4090, Llama-3.1-8B extreme: no parameter offload, and slower than balanced only with the reason', async () => {
    const rtx4090 = machine('desktop-rtx4090')
    const extreme = await plan(rtx4090, finetune('llama-3.1-8b'), 'extreme')
    const balanced = await plan(rtx4090, finetune('llama-3.1-8b'), 'balanced')
    // 0.1 planned QLoRA + ZeRO-3 + offload of everything here (1.4K tokens/s) only to fill memory.
    expect(extreme.settings.offload).not.toBe('all')
    expect(extreme.throughput.tokensPerSecond).toBeGreaterThan(1.6e3)
    if (extreme.throughput.tokensPerSecond < balanced.throughput.tokensPerSecond) {
      const why = extreme.warnings.find((w) => w.id === 'extreme-more-work-per-token')
      expect(why?.message).toMatch(/balanced trains qlora/)
    }
  })

  it('a full 7B fine-tune on a 24 GB GPU with 256 GB of RAM offloads at full sequence instead of cutting it to 128', async () => {
    const big = withRam(machine('desktop-rtx4090'), 256)
    const extreme = await plan(big, finetune('llama-2-7b', { method: 'full' }), 'extreme')
    expect(extreme.settings.seq).toBeGreaterThanOrEqual(2048)
    expect(extreme.settings.offload).toBe('all')
    expect(extreme.settings.strategy).toBe('zero-offload')
    // The core pack prefers no checkpointing at 24 GB; that preference yields before the sequence does.
    expect(extreme.warnings.map((w) => w.id)).toContain('rule-preference-relaxed')
  })

  it('takes 8-bit optimizer states over a longer sequence that needs offload, which the estimate says is slower', async () => {
    const extreme = await plan(machine('desktop-rtx4090'), finetune('llama-3.2-1b'), 'extreme')
    expect(extreme.settings.method).toBe('full')
    expect(extreme.settings.offload).toBe('none')
    expect(extreme.settings.optimizer).toBe('adamw-8bit')
    expect(ladderStep(extreme)).toBe('8-bit-optimizer')
    // The offloading setups were weighed and predicted slower: explain lists them with their speed.
    const weighed = extreme.trace.filter((t) => t.setting === 'offload').at(-1)?.facts.alternatives as {
      setup: string
      tokensPerSecond: number
      chosen: boolean
    }[]
    const chosen = weighed.find((a) => a.chosen)
    const offloading = weighed.filter((a) => a.setup.includes('offload'))
    expect(offloading.length).toBeGreaterThan(0)
    for (const a of offloading) expect(a.tokensPerSecond).toBeLessThan(chosen?.tokensPerSecond ?? 0)
    const trace = extreme.trace.filter((t) => t.setting === 'optimizer').at(-1)
    expect(trace?.reason).toMatch(/core-optimizer-adamw prefers "adamw"; 8-bit optimizer states/)
  })

  it('shards across GPUs before offloading, and offloads only when sharding and checkpointing do not fit', async () => {
    const a100s = machine('server-4x-a100-40gb')
    const extreme = await plan(a100s, finetune('llama-3.1-8b', { method: 'full', seq: 1024 }), 'extreme')
    expect(extreme.settings.sharding).not.toBe('none')
    expect(extreme.settings.offload).toBe('none')
    const balanced = await plan(a100s, finetune('llama-3.1-8b', { method: 'full', seq: 1024 }), 'balanced')
    expect(balanced.settings.offload).toBe('optimizer')
    expect(ladderStep(balanced)).toBe('offload-optimizer')
    // The same work: extreme is not slower than balanced.
    expect(extreme.throughput.tokensPerSecond).toBeGreaterThanOrEqual(balanced.throughput.tokensPerSecond)
    // Advice matches the plan: only a plan that shards and still offloads hears that more GPUs would avoid it.
    expect(extreme.suggestions.map((s) => s.id)).not.toContain('nvlink-sharding')
    expect(balanced.suggestions.find((s) => s.id === 'nvlink-sharding')?.message).toMatch(
      /Sharded over 4 GPUs the training state still does not fit, so optimizer states go to host RAM/,
    )
  })

  it('cuts the sequence below the mode range only when nothing else fits, and never below --seq', async () => {
    const t4 = machine('cloud-t4')
    const pinned = await plan(t4, finetune('llama-3.2-1b', { method: 'qlora', seq: 2048 }), 'extreme')
    expect(pinned.settings.seq).toBe(2048)
  })
})
