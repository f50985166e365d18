import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CORE_PACK_ROOT, loadCorePack } from '../../src/node/core-pack.js'
import type { LoadedPack } from '../../src/packs/loaded-pack.js'
import { decide } from '../../src/rules/decide.js'
import { deriveFacts } from '../../src/rules/derive-facts.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import { packOf } from '../helpers/packs.js'

const profile = HardwareProfile.parse(
  JSON.parse(readFileSync(`${CORE_PACK_ROOT}fixtures/desktop-rtx3070.json`, 'utf8')),
)
const facts = deriveFacts(profile, null, 'balanced')

const pack = packOf
const always = { all: [] }
const set = (id: string, setting: string, value: unknown, priority = 50) => ({
  id,
  description: id,
  priority,
  conditions: always,
  event: { type: 'set', params: { setting, value, reason: `${id} says so` } },
})

describe('decide', () => {
  it('ranks by priority, then layer, then rule id', async () => {
    const core = pack('c', 'core', [set('c-workers', 'dataloaderWorkers', 1, 60)])
    const vendor = pack('v', 'vendor', [
      set('v-workers', 'dataloaderWorkers', 2, 60),
      set('v-compile', 'compile', true),
    ])
    const user = pack('u', 'user', [
      set('u-workers', 'dataloaderWorkers', 3, 59),
      set('u-compile', 'compile', false),
      set('a-tf32', 'tf32', true),
      set('b-tf32', 'tf32', false),
    ])
    const d = await decide([core, vendor, user], facts)
    expect(d.settings.dataloaderWorkers?.value).toBe(2)
    expect(d.settings.dataloaderWorkers?.overridden.map((o) => o.provenance.rule)).toEqual([
      'c-workers',
      'u-workers',
    ])
    expect(d.settings.compile).toMatchObject({
      value: false,
      provenance: { rule: 'u-compile', pack: 'u', layer: 'user' },
    })
    expect(d.settings.tf32?.provenance.rule).toBe('a-tf32')
    expect(d.fired[0]).toBe('v/v-workers')
  })

  it('skips forbidden values and lets a forbid decide a yes/no setting alone', async () => {
    const vendor = pack('v', 'vendor', [
      {
        id: 'no-flash',
        description: 'd',
        conditions: always,
        event: { type: 'forbid', params: { setting: 'attention', value: 'flash', reason: 'no kernels' } },
      },
      {
        id: 'no-compile',
        description: 'd',
        conditions: always,
        event: { type: 'forbid', params: { setting: 'compile', value: true, reason: 'broken' } },
      },
    ])
    const user = pack('u', 'user', [
      set('flash', 'attention', 'flash', 90),
      set('sdpa', 'attention', 'sdpa', 10),
    ])
    const d = await decide([vendor, user], facts)
    expect(d.settings.attention).toMatchObject({ value: 'sdpa', source: 'set' })
    expect(d.settings.attention?.overridden[0]).toMatchObject({
      value: 'flash',
      why: 'forbidden',
      forbiddenBy: 'v/no-flash',
    })
    expect(d.settings.compile).toMatchObject({
      value: false,
      source: 'forbid',
      provenance: { rule: 'no-compile' },
    })
  })

  it('keeps the lowest cap and lowers a decided value to it', async () => {
    const p = pack('p', 'vendor', [
      set('workers', 'dataloaderWorkers', 12),
      {
        id: 'cap-cores',
        description: 'd',
        conditions: always,
        event: {
          type: 'cap',
          params: { setting: 'dataloaderWorkers', max: { fact: 'spareCores' }, reason: 'cores' },
        },
      },
      {
        id: 'cap-six',
        description: 'd',
        conditions: always,
        event: { type: 'cap', params: { setting: 'dataloaderWorkers', max: 6, reason: 'six' } },
      },
      { ...set('threads', 'threads', { fact: 'usableCores' }), id: 'threads' },
    ])
    const d = await decide([p], facts)
    expect(d.caps.dataloaderWorkers).toMatchObject({ max: 6, provenance: { rule: 'cap-six' } })
    expect(d.caps.dataloaderWorkers?.others.map((o) => o.max)).toEqual([15])
    expect(d.settings.dataloaderWorkers).toMatchObject({ value: 6, cappedFrom: 12 })
    expect(d.settings.threads).toMatchObject({ value: 16, provenance: { facts: { usableCores: 16 } } })
  })

  it('records the facts a rule and its pack read', async () => {
    const p = pack(
      'p',
      'vendor',
      [
        {
          ...set('x', 'compile', true),
          conditions: { all: [{ fact: 'vramGiB', operator: 'lessThan', value: { fact: 'ramGiB' } }] },
        },
      ],
      {
        all: [{ fact: 'gpuVendor', operator: 'equal', value: 'nvidia' }],
      },
    )
    const d = await decide([p], facts)
    expect(d.settings.compile?.provenance.facts).toEqual({ gpuVendor: 'nvidia', ramGiB: 32, vramGiB: 8 })
    expect(d.packs).toEqual([{ name: 'p', version: '1.0.0', layer: 'vendor', applies: true }])
  })

  it('keeps a pack whose appliesTo fails out of every decision', async () => {
    const p = pack('amd-only', 'vendor', [set('x', 'compile', false)], {
      all: [{ fact: 'gpuVendor', operator: 'equal', value: 'amd' }],
    })
    const d = await decide([p], facts)
    expect(d.settings.compile).toBeUndefined()
    expect(d.packs[0]?.applies).toBe(false)
  })

  it('says each message once, by the first rule in precedence', async () => {
    const warn = (id: string, priority: number, message: string) => ({
      id,
      description: 'd',
      priority,
      conditions: always,
      event: { type: 'warn', params: { id: 'hot', message } },
    })
    const d = await decide([pack('p', 'vendor', [warn('a', 10, 'low'), warn('b', 90, 'high')])], facts)
    expect(d.warnings).toEqual([expect.objectContaining({ id: 'hot', message: 'high' })])
  })

  it('refuses incomplete facts', async () => {
    const { mode: _mode, ...partial } = facts
    await expect(decide([loadCorePack()], partial as typeof facts)).rejects.toMatchObject({
      code: 'E_FACTS',
      kind: 'validation',
    })
  })

  it('gives the same decisions from a cached engine and leaves frozen inputs alone', async () => {
    const packs = [loadCorePack()]
    const frozen = Object.freeze({ ...facts })
    const first = await decide(packs, frozen)
    const second = await decide([...packs], frozen)
    expect(second).toEqual(first)
  })
})
