import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CORE_PACK_ROOT } from '../../src/node/core-pack.js'
import { deriveFacts } from '../../src/rules/derive-facts.js'
import { Facts } from '../../src/schemas/facts.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'

const fixture = (name: string) =>
  HardwareProfile.parse(JSON.parse(readFileSync(`${CORE_PACK_ROOT}fixtures/${name}.json`, 'utf8')))

describe('deriveFacts', () => {
  it('derives every fact, valid under the Facts schema', () => {
    for (const name of [
      'desktop-rtx3070',
      'server-mi300x-8x',
      'container-cpu-4core',
      'desktop-arc-a770',
      'mac-mini-m4',
    ]) {
      const facts = deriveFacts(fixture(name), null, 'balanced')
      expect(Facts.safeParse(facts).success).toBe(true)
    }
  })

  it('reads the primary NVIDIA GPU', () => {
    const facts = deriveFacts(fixture('desktop-rtx3070'), null, 'extreme')
    expect(facts).toMatchObject({
      mode: 'extreme',
      gpuVendor: 'nvidia',
      gpuFamily: 'rtx30',
      gpuCatalogId: 'rtx-3070',
      gpuCount: 1,
      vramGiB: 8,
      computeCapability: 8.6,
      computeCapabilityMajor: 8,
      driverVersionMajor: 550,
      cudaVersion: 12.4,
      rocmVersion: null,
      cpuVendor: 'amd',
      physicalCores: 8,
      spareCores: 15,
      interconnect: 'none',
      workloadKind: 'none',
      nodes: 1,
    })
  })

  it('counts GPUs of the primary model and limits them to what the plan uses', () => {
    const profile = fixture('server-mi300x-8x')
    expect(deriveFacts(profile, null, 'balanced')).toMatchObject({
      gpuCount: 8,
      totalVramGiB: 1536,
      interconnect: 'xgmi',
      gfxTarget: 'gfx942',
    })
    expect(deriveFacts(profile, null, 'balanced', { gpus: 1 })).toMatchObject({
      gpuCount: 1,
      interconnect: 'none',
    })
    expect(deriveFacts(profile, null, 'balanced', { modelParams: 7.2e9, seq: 4096 })).toMatchObject({
      modelParamsB: 7.2,
      seq: 4096,
    })
  })

  it('plans integrated PC graphics as a CPU-only machine', () => {
    const profile = fixture('desktop-arc-a770')
    const integrated = { ...profile, gpus: profile.gpus.map((gpu) => ({ ...gpu, integrated: true })) }
    expect(deriveFacts(integrated, null, 'balanced')).toMatchObject({
      gpuCount: 0,
      gpuFamily: 'cpu',
      gpuVendor: 'none',
      integratedGpu: true,
      vramGiB: 0,
    })
  })

  it('reads container limits, storage and the Apple chip', () => {
    expect(deriveFacts(fixture('container-cpu-4core'), null, 'balanced')).toMatchObject({
      container: true,
      usableCores: 4,
      spareCores: 3,
      storageKind: 'hdd',
      gpuFamily: 'cpu',
    })
    expect(deriveFacts(fixture('mac-mini-m4'), null, 'balanced')).toMatchObject({
      gpuVendor: 'apple',
      appleChipGeneration: 4,
      unifiedMemory: true,
      mps: true,
      vramGiB: 10.7,
    })
  })

  it('takes the workload kind, method and machine count', () => {
    const workload = {
      schemaVersion: 1 as const,
      kind: 'finetune' as const,
      model: null,
      method: 'qlora' as const,
      frozenModels: [],
      datasetBytes: null,
      timeBudgetHours: null,
      targetEffectiveBatch: null,
      seq: 2048,
      nodes: 2,
    }
    expect(deriveFacts(fixture('desktop-rtx3070'), workload, 'balanced')).toMatchObject({
      workloadKind: 'finetune',
      method: 'qlora',
      seq: 2048,
      nodes: 2,
    })
  })
})
