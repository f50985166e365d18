import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundledCatalogEntries } from './helpers/bundled-plugins.js'
import { rigfitJson } from './helpers/run-cli.js'

// biome-ignore lint/suspicious/noExplicitAny: plans read back from the CLI's JSON output
type Json = any

const entries = bundledCatalogEntries()
const require = createRequire(import.meta.url)

/** The GPUs people train on in 2026, as a user types them, with the catalog entry and pack each must reach. */
const GPUS: { typed: string; id: string; device: string; pack: string }[] = [
  { typed: 'RTX 5090', id: 'rtx-5090', device: 'cuda', pack: 'rtx50' },
  { typed: 'RTX 5080', id: 'rtx-5080', device: 'cuda', pack: 'rtx50' },
  { typed: 'RTX 5070 Ti', id: 'rtx-5070-ti', device: 'cuda', pack: 'rtx50' },
  { typed: 'RTX 5070', id: 'rtx-5070', device: 'cuda', pack: 'rtx50' },
  { typed: 'RTX 5060 Ti 16GB', id: 'rtx-5060-ti-16gb', device: 'cuda', pack: 'rtx50' },
  { typed: 'RTX 4080 SUPER', id: 'rtx-4080-super', device: 'cuda', pack: 'rtx40' },
  { typed: 'RTX PRO 6000 Blackwell', id: 'rtx-pro-6000-blackwell', device: 'cuda', pack: 'datacenter' },
  { typed: 'H200', id: 'h200-sxm-141gb', device: 'cuda', pack: 'datacenter' },
  { typed: 'B200', id: 'b200', device: 'cuda', pack: 'datacenter' },
  { typed: 'GB200', id: 'gb200', device: 'cuda', pack: 'datacenter' },
  { typed: 'MI300X', id: 'mi300x', device: 'rocm', pack: 'rdna' },
  { typed: 'MI325X', id: 'mi325x', device: 'rocm', pack: 'rdna' },
  { typed: 'RX 9070 XT', id: 'rx-9070-xt', device: 'rocm', pack: 'rdna' },
  { typed: 'Arc B580', id: 'arc-b580', device: 'xpu', pack: 'intel' },
  { typed: 'Arc A770', id: 'arc-a770-16gb', device: 'xpu', pack: 'intel' },
  { typed: 'Apple M3 Max (40-core GPU)', id: 'm3-max-40c', device: 'mps', pack: 'apple' },
  { typed: 'Apple M4 Pro', id: 'm4-pro-20c', device: 'mps', pack: 'apple' },
]

function plan(gpu: string, ...rest: string[]): Json {
  return rigfitJson(['plan', '--gpu', gpu, '--model', 'llama-3.2-1b', '--method', 'lora', ...rest])
}

describe('the 2026 GPU catalog through --gpu', () => {
  it.each(GPUS)(
    '$typed resolves to $id and plans on $device with the $pack pack',
    ({ typed, id, device, pack }) => {
      const entry = entries.find((e) => e.id === id)
      expect(entry, id).toBeDefined()
      const result = plan(typed)
      expect(result.hardware.gpuName).toBe(entry?.name)
      expect(result.hardware.deviceMemoryBytes).toBeGreaterThan(0)
      expect(result.settings.device).toBe(device)
      expect(result.trace.some((t: Json) => t.pack === pack)).toBe(true)
      // The plan fits the entry's memory: what it predicts per device stays within the capacity it planned on.
      expect(result.memory.capacityBytes).toBe(result.hardware.deviceMemoryBytes)
      expect(result.memory.perDevice.total).toBeLessThanOrEqual(result.memory.capacityBytes)
      expect(result.throughput.tokensPerSecond).toBeGreaterThan(0)
    },
  )

  it('gives every GPU on the list a source, and its memory in the plans', () => {
    for (const { id } of GPUS) {
      const entry = entries.find((e) => e.id === id)
      expect(entry?.source.length, id).toBeGreaterThan(10)
      expect(entry?.vramGB, id).toBeGreaterThan(0)
    }
  })

  it('an RTX 5090 fine-tunes Llama 3.1 8B with LoRA under the rtx50 pack', () => {
    const result = rigfitJson(['plan', '--gpu', 'RTX 5090', '--model', 'llama-3.1-8b', '--method', 'lora'])
    expect(result.settings).toMatchObject({
      device: 'cuda',
      precision: 'bf16-mixed',
      tf32: true,
      method: 'lora',
    })
    const rules = new Set(result.trace.map((t: Json) => t.rule))
    for (const rule of ['rtx50-precision-bf16', 'rtx50-tf32', 'rtx50-compile']) expect(rules).toContain(rule)
    expect(result.hardware.deviceMemoryBytes).toBe(32 * 1024 ** 3)
    expect(result.memory.perDevice.total).toBeLessThanOrEqual(result.memory.capacityBytes)
  })
})

describe('the intel pack on an Arc profile', () => {
  const fixture = (name: string) =>
    join(dirname(require.resolve('@rigfit/plugin-intel/package.json')), 'fixtures', `${name}.json`)

  it('plans a recorded-shape Arc B580 profile on xpu with the intel rules, not the CPU', () => {
    const result = rigfitJson([
      'plan',
      '--from',
      fixture('desktop-arc-b580'),
      '--model',
      'llama-3.2-1b',
      '--method',
      'lora',
    ])
    expect(result.settings).toMatchObject({
      device: 'xpu',
      precision: 'bf16-mixed',
      compile: { enabled: false },
      attention: 'sdpa',
    })
    expect(result.settings.dataloader.pinMemory).toBe(false)
    const byRule = new Map(result.trace.map((t: Json) => [t.setting, t.rule]))
    expect(byRule.get('device')).toBe('intel-device-xpu')
    expect(byRule.get('precision')).toBe('intel-precision-bf16')
    const ids = (list: Json[]) => list.map((m) => m.id)
    expect(ids(result.suggestions)).toContain('intel-ipex')
    expect(ids(result.warnings)).not.toContain('gpu-not-planned')
    expect(ids(result.warnings)).not.toContain('cpu-training-slow')
  })

  it('notes oneCCL when two Arc cards train together', () => {
    const result = rigfitJson([
      'plan',
      '--from',
      fixture('workstation-2x-arc-b580'),
      '--model',
      'llama-3.2-1b',
    ])
    expect(result.settings.device).toBe('xpu')
    expect(result.suggestions.map((m: Json) => m.id)).toContain('intel-oneccl')
  })
})
