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

const machine = (name: string) =>
  HardwareProfile.parse(
    JSON.parse(readFileSync(new URL(`../fixtures/machines/${name}.json`, import.meta.url), 'utf8')),
  )
const workload = (nodes: number): Workload => ({
  schemaVersion: WORKLOAD_SCHEMA_VERSION,
  kind: 'finetune',
  model: findCatalogModel('gpt2') ?? null,
  method: 'full',
  frozenModels: [],
  datasetBytes: null,
  timeBudgetHours: null,
  targetEffectiveBatch: null,
  seq: null,
  nodes,
})
async function plan(profile: HardwareProfile, nodes: number, mode: Mode = 'balanced') {
  const decisions = await decide([loadCorePack()], deriveFacts(profile, workload(nodes), mode))
  return generatePlan({
    profile,
    workload: workload(nodes),
    mode,
    decisions,
    options: { createdAt: 'fixed' },
  })
}

describe('the planned devices', () => {
  it('a Mac trains alone: several mps nodes are no plan, with the reason', async () => {
    const mac = machine('macbook-m2-16gb')
    expect((await plan(mac, 1)).settings.device).toBe('mps')
    await expect(plan(mac, 2)).rejects.toMatchObject({
      kind: 'fit',
      code: 'E_MPS_ONE_NODE',
      message: expect.stringMatching(/no distributed backend/),
    })
  })

  it('an AMD plan names its gfx target where an NVIDIA plan names its compute capability', async () => {
    expect((await plan(machine('workstation-w7900'), 1)).hardware.computeCapability).toMatch(/^gfx\d/)
    expect((await plan(machine('desktop-rtx4090'), 1)).hardware.computeCapability).toBe('8.9')
  })
})
