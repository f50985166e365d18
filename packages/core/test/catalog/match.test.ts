import { describe, expect, it } from 'vitest'
import { parseGpuName } from '../../src/catalog/gpu-name.js'
import { matchGpu } from '../../src/catalog/match.js'
import type { GpuCatalogEntry } from '../../src/schemas/gpu-catalog.js'

const GIB = 1024 ** 3
const MIB = 1024 ** 2

/** Spec-sheet entries cut down to what matching reads; the plugins' tests run the real catalogs. */
function entry(
  id: string,
  name: string,
  vramGB: number,
  extra: Partial<GpuCatalogEntry> = {},
): GpuCatalogEntry {
  return {
    id,
    vendor: 'nvidia',
    family: 'datacenter',
    series: 'test',
    name,
    aliases: [],
    arch: 'test',
    vramGB,
    devicesPerBoard: 1,
    memoryBandwidthGBs: 1,
    fp32Tflops: 1,
    fp16TensorTflops: null,
    tensorCores: true,
    bf16: 'yes',
    tf32: 'yes',
    fp8: 'no',
    computeCapability: '8.0',
    tdpWatts: 300,
    unifiedMemory: false,
    unverified: [],
    source: 'test',
    ...extra,
  }
}

const catalog = [
  entry('a100-40gb-sxm4', 'A100 40GB SXM4', 40, { aliases: ['NVIDIA A100-SXM4-40GB'] }),
  entry('a100-40gb-pcie', 'A100 40GB PCIe', 40),
  entry('a100-80gb-sxm4', 'A100 80GB SXM4', 80),
  entry('a100-80gb-pcie', 'A100 80GB PCIe', 80, { aliases: ['NVIDIA A100 80GB PCIe'] }),
  entry('a10', 'A10', 24, { aliases: ['NVIDIA A10'] }),
  entry('h100-sxm5-80gb', 'H100 SXM5 80GB', 80, { aliases: ['NVIDIA H100 80GB HBM3'] }),
  entry('h100-pcie-80gb', 'H100 PCIe 80GB', 80, { aliases: ['NVIDIA H100 PCIe'] }),
  entry('rtx-4060-ti-8gb', 'GeForce RTX 4060 Ti 8GB', 8, {
    family: 'rtx40',
    aliases: ['NVIDIA GeForce RTX 4060 Ti'],
  }),
  entry('rtx-4060-ti-16gb', 'GeForce RTX 4060 Ti 16GB', 16, {
    family: 'rtx40',
    aliases: ['NVIDIA GeForce RTX 4060 Ti'],
  }),
  entry('rtx-4060', 'GeForce RTX 4060', 8, { family: 'rtx40', aliases: ['NVIDIA GeForce RTX 4060'] }),
  entry('pro-w7900', 'Radeon PRO W7900', 48, {
    vendor: 'amd',
    family: 'rdna',
    aliases: ['AMD Radeon PRO W7900'],
  }),
  entry('mi250x', 'Instinct MI250X', 128, { vendor: 'amd', family: 'rdna', devicesPerBoard: 2 }),
  entry('m3-max-30c', 'Apple M3 Max (30-core GPU)', 96, {
    vendor: 'apple',
    family: 'apple',
    unifiedMemory: true,
    aliases: ['Apple M3 Max'],
  }),
  entry('m3-max-40c', 'Apple M3 Max (40-core GPU)', 128, {
    vendor: 'apple',
    family: 'apple',
    unifiedMemory: true,
    aliases: ['Apple M3 Max'],
  }),
]

const id = (query: string, vram: number | null = null) => matchGpu(query, vram, catalog)?.entry.id ?? null
const expectMatch = (query: string, vram: number | null, entryId: string, matchedBy: string) =>
  expect(matchGpu(query, vram, catalog)).toMatchObject({ entry: { id: entryId }, matchedBy })

describe('parseGpuName', () => {
  it('drops vendor words, splits letters from digits and keeps variant details apart', () => {
    const key = parseGpuName('NVIDIA A100-SXM4-80GB')
    expect([...key.tokens].sort()).toEqual(['100', 'a'])
    expect(key.memoryGB).toBe(80)
    expect(key.form).toBe('sxm')
    expect(parseGpuName('NVIDIA H100 80GB HBM3').form).toBe('sxm')
    expect(parseGpuName('Apple M3 Max (40-core GPU)').gpuCores).toBe(40)
    expect([...parseGpuName('RTX4090').tokens]).toEqual(['rtx', '4090'])
    expect([...parseGpuName('AMD Radeon PRO W7900').tokens]).toEqual(['w', '7900'])
    expect(parseGpuName('NVIDIA GeForce RTX 4060 Max-Q').tokens.has('laptop')).toBe(true)
  })
})

describe('matchGpu', () => {
  it('matches tool spellings exactly, case and spacing aside', () => {
    expectMatch('NVIDIA A100-SXM4-40GB', null, 'a100-40gb-sxm4', 'exact')
    expectMatch('  nvidia   a100 80gb pcie ', null, 'a100-80gb-pcie', 'exact')
  })

  it('reads memory size and form factor from the name', () => {
    expectMatch('NVIDIA A100-SXM4-80GB', null, 'a100-80gb-sxm4', 'normalized')
    expect(id('A100 80GB')).toBe('a100-80gb-sxm4')
    expect(id('A100 40GB PCIe')).toBe('a100-40gb-pcie')
    expect(id('NVIDIA H100 80GB HBM3')).toBe('h100-sxm5-80gb')
    expect(id('H100 PCIe')).toBe('h100-pcie-80gb')
  })

  it('tells variants apart by the reported memory', () => {
    expectMatch('A100', 40536 * MIB, 'a100-40gb-sxm4', 'vram')
    expectMatch('NVIDIA A100', 81920 * MIB, 'a100-80gb-sxm4', 'vram')
    expectMatch('NVIDIA GeForce RTX 4060 Ti', 16380 * MIB, 'rtx-4060-ti-16gb', 'vram')
    expectMatch('NVIDIA GeForce RTX 4060 Ti', 8188 * MIB, 'rtx-4060-ti-8gb', 'vram')
  })

  it('falls back to catalog order when nothing tells variants apart', () => {
    expectMatch('H100', null, 'h100-sxm5-80gb', 'normalized')
    expectMatch('H100', 80 * GIB, 'h100-sxm5-80gb', 'normalized')
  })

  it('accepts shorthands without the product-line prefix', () => {
    expect(id('4060')).toBe('rtx-4060')
    expect(id('rtx 4060 ti 16gb')).toBe('rtx-4060-ti-16gb')
    expect(id('W7900')).toBe('pro-w7900')
  })

  it('never confuses a model with its suffixed siblings', () => {
    expect(id('RTX 4060')).toBe('rtx-4060')
    expect(id('A10')).toBe('a10')
    expect(id('A100')).toBe('a100-40gb-sxm4')
    expect(id('NVIDIA A10G')).toBeNull()
  })

  it('returns null rather than guessing a variant the catalog lacks', () => {
    expect(id('NVIDIA GeForce RTX 4060 Laptop GPU', 8188 * MIB)).toBeNull()
    expect(id('NVIDIA H100 NVL')).toBeNull()
    expect(id('A100 64GB')).toBeNull()
    expect(id('')).toBeNull()
    expect(id('NVIDIA')).toBeNull()
  })

  it('compares per device on multi-die boards', () => {
    expect(matchGpu('AMD Instinct MI250X', 64 * GIB, catalog)?.entry.id).toBe('mi250x')
  })

  it('picks the Apple configuration that can hold the reported unified memory', () => {
    expectMatch('Apple M3 Max', 128 * GIB, 'm3-max-40c', 'vram')
    expectMatch('Apple M3 Max', 36 * GIB, 'm3-max-30c', 'vram')
    expect(id('Apple M3 Max (40-core GPU)')).toBe('m3-max-40c')
  })
})
