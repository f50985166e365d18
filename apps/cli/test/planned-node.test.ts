import { CLOUD_PRESETS } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

// biome-ignore lint/suspicious/noExplicitAny: plans read back from the CLI's JSON output
type Json = any

const GIB = 2 ** 30
const warningIds = (plan: Json): string[] => plan.warnings.map((w: { id: string }) => w.id)

describe('the CPU of the planned node, not of the machine rigfit runs on', () => {
  it.each(CLOUD_PRESETS.map((preset) => [preset.id, preset] as const))(
    '--instance %s: the profile has the preset vCPUs and the ranks share them',
    (id, preset) => {
      const { profile } = rigfitJson(['analyze', '--instance', id, '--profile-only'])
      expect(profile.cpu).toMatchObject({
        logicalCores: preset.vcpus,
        usableCores: preset.vcpus,
        physicalCores: preset.physicalCores,
      })
      const plan = rigfitJson(['plan', '--instance', id, '--model', 'llama-3.2-1b'])
      const s = plan.settings
      const ranks = Math.max(1, s.gpus)
      expect(s.threads * ranks, `${id}: threads`).toBeLessThanOrEqual(preset.vcpus)
      expect(s.dataloader.workers * ranks, `${id}: workers`).toBeLessThanOrEqual(preset.vcpus)
      expect(warningIds(plan)).not.toContain('assumed-cpus')
    },
  )

  it('what-if GPUs without --cpus assume a stated node CPU and the plan says so; --cpus replaces it', () => {
    const assumed = rigfitJson(['plan', '--gpu', 'H100', '--gpus', '8', '--model', 'llama-3.1-8b'])
    const warning = assumed.warnings.find((w: { id: string }) => w.id === 'assumed-cpus')
    expect(warning?.message).toMatch(/96 logical CPUs.*--cpus N/)
    const few = rigfitJson([
      'plan',
      '--gpu',
      'H100',
      '--gpus',
      '8',
      '--model',
      'llama-3.1-8b',
      '--cpus',
      '16',
    ])
    const many = rigfitJson([
      'plan',
      '--gpu',
      'H100',
      '--gpus',
      '8',
      '--model',
      'llama-3.1-8b',
      '--cpus',
      '192',
    ])
    for (const plan of [few, many]) expect(warningIds(plan)).not.toContain('assumed-cpus')
    expect(few.settings.threads * 8).toBeLessThanOrEqual(16)
    expect(many.settings.threads * 8).toBeLessThanOrEqual(192)
    expect(many.settings.threads).toBeGreaterThan(few.settings.threads)
    const { profile } = rigfitJson([
      'analyze',
      '--gpu',
      'H100',
      '--gpus',
      '8',
      '--cpus',
      '192',
      '--profile-only',
    ])
    expect(profile.cpu).toMatchObject({ logicalCores: 192, usableCores: 192 })
    expect(profile.overrides).toContain('cpus=192')
  })

  it('--cpus is refused when it is not a whole positive number, or beside --instance', () => {
    for (const bad of ['0', '-4', 'many']) {
      const run = rigfit(['plan', '--gpu', 'RTX 4090', '--cpus', bad, '--json'])
      expect(run.status, bad).toBe(2)
      expect(JSON.parse(run.stdout).error.message).toMatch(/--cpus/)
    }
    expect(rigfit(['plan', '--instance', 'p4d.24xlarge', '--cpus', '8']).status).toBe(2)
  })
})

describe('the RAM of the planned node, not of the machine rigfit runs on', () => {
  it('what-if GPUs without --ram assume twice their memory and the plan says so; --ram replaces it', () => {
    for (const [gpus, ramGiB] of [
      ['1', 256],
      ['8', 2048],
    ] as const) {
      const { profile } = rigfitJson(['analyze', '--gpu', 'H100', '--gpus', gpus, '--profile-only'])
      expect(profile.memory.totalBytes, `${gpus} GPUs`).toBe(ramGiB * GIB)
      expect(profile.overrides).toContain(`ram=${ramGiB}GiB (assumed)`)
      // Another node's disks, container limits, battery and temperatures are not this machine's.
      expect(profile.storage).toEqual([])
      expect(profile.host.container.detected).toBe(false)
      expect(profile.power).toMatchObject({ batteryPresent: false, onBattery: false })
      expect(profile.thermal).toMatchObject({ cpuTempC: null, throttlingRisk: 'unknown' })
      const plan = rigfitJson(['plan', '--gpu', 'H100', '--gpus', gpus, '--model', 'llama-3.1-8b'])
      const warning = plan.warnings.find((w: { id: string }) => w.id === 'assumed-ram')
      expect(warning?.message).toMatch(new RegExp(`${ramGiB} GiB.*--ram GiB`))
    }
    const given = rigfitJson(['plan', '--gpu', 'H100', '--ram', '96', '--model', 'llama-3.1-8b'])
    expect(warningIds(given)).not.toContain('assumed-ram')
    const preset = rigfitJson(['plan', '--instance', 'p4d.24xlarge', '--model', 'llama-3.1-8b'])
    expect(warningIds(preset)).not.toContain('assumed-ram')
  })
})

describe('the link between what-if GPUs comes from the catalog', () => {
  it.each([
    ['H100', '8'],
    ['A100 80GB', '4'],
  ])('--gpu %j --gpus %s (SXM, NVLink) does not warn "No NVLink"', (gpu, gpus) => {
    const plan = rigfitJson(['plan', '--gpu', gpu, '--gpus', gpus, '--model', 'llama-3.1-8b'])
    expect(plan.warnings.map((w: { message: string }) => w.message).join('\n')).not.toMatch(/No NVLink/)
    const { profile } = rigfitJson(['analyze', '--gpu', gpu, '--gpus', gpus, '--profile-only'])
    expect(profile.interconnect.kind).toBe('nvlink')
  })

  it('PCIe cards still warn', () => {
    const plan = rigfitJson(['plan', '--gpu', 'H100 PCIe', '--gpus', '4', '--model', 'llama-3.1-8b'])
    expect(plan.warnings.map((w: { message: string }) => w.message).join('\n')).toMatch(/No NVLink/)
  })
})

describe('a what-if Mac', () => {
  it('profile --gpu "Apple M2": the GPU gets the working set of the Mac\'s RAM, never more than the RAM', () => {
    for (const ram of [undefined, '8', '16', '24']) {
      const profile = rigfitJson(['profile', '--gpu', 'Apple M2', ...(ram ? ['--ram', ram] : [])])
      const total = profile.memory.totalBytes
      const gpu = profile.gpus[0]
      expect(gpu.catalog.id).toBe('m2-10c')
      expect(total).toBe((ram ? Number(ram) : 24) * GIB)
      expect(gpu.vramUsableBytes).toBe(Math.floor((total * 2) / 3))
      expect(profile.host.platform).toBe('darwin')
      expect(profile.acceleration.mps).toBe(true)
    }
  })

  it('estimate --gpu "Apple M2" takes --ram and sizes the GPU by its working set', () => {
    const args = [
      'estimate',
      '--model',
      'llama-3.2-1b',
      '--seq',
      '1024',
      '--micro-batch',
      '1',
      '--gpu',
      'Apple M2',
    ]
    expect(rigfitJson([...args, '--ram', '16']).capacity).toBe(Math.floor((16 * GIB * 2) / 3))
    expect(rigfitJson([...args, '--ram', '8']).capacity).toBe(Math.floor((8 * GIB * 2) / 3))
    expect(rigfitJson(args).capacity).toBe(16 * GIB)
    // --vram still says the device memory outright.
    expect(rigfitJson([...args, '--ram', '16', '--vram', '12']).capacity).toBe(12 * GIB)
    const bad = rigfit([...args, '--ram', 'lots'])
    expect(bad.status).toBe(2)
    expect(bad.stderr).toMatch(/--ram "lots"/)
  })

  it('analyze --gpu "Apple M2" --ram 16 plans a Mac: no container or missing-MPS warnings from this machine, and a catalog GPU is not called unknown', () => {
    const out = rigfitJson(['analyze', '--gpu', 'Apple M2', '--ram', '16'])
    const text = out.warnings.map((w: { message: string }) => w.message).join('\n')
    expect(text).not.toMatch(/not in any GPU catalog/)
    expect(text).not.toMatch(/MPS backend is not available/)
    expect(text).not.toMatch(/Running in a container/)
    for (const plan of Object.values(out.plans) as Json[]) {
      expect(plan.settings.device).toBe('mps')
      expect(plan.memory.capacityBytes).toBeLessThanOrEqual(Math.floor((16 * GIB * 2) / 3))
      expect(plan.settings.threads).toBeLessThanOrEqual(out.profile.cpu.physicalCores)
    }
  })
})
