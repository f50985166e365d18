import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { matchGpu } from '../../src/catalog/match.js'
import { suggestGpus, unknownGpuError } from '../../src/catalog/suggest.js'
import { RigfitError } from '../../src/errors.js'
import type { GpuCatalogEntry } from '../../src/schemas/gpu-catalog.js'

/** Catalog entries cut down to what suggestion reads: names and tool spellings. */
function entry(id: string, name: string, aliases: string[] = []): GpuCatalogEntry {
  return {
    id,
    vendor: 'nvidia',
    family: 'rtx40',
    series: 'test',
    name,
    aliases,
    arch: 'test',
    vramGB: 16,
    devicesPerBoard: 1,
    memoryBandwidthGBs: 1,
    fp32Tflops: 1,
    fp16TensorTflops: null,
    tensorCores: true,
    bf16: 'yes',
    tf32: 'yes',
    fp8: 'no',
    computeCapability: '8.9',
    tdpWatts: 300,
    unifiedMemory: false,
    unverified: [],
    source: 'test',
  }
}

const catalog = [
  entry('rtx-4090', 'GeForce RTX 4090', ['NVIDIA GeForce RTX 4090']),
  entry('rtx-4080', 'GeForce RTX 4080', ['NVIDIA GeForce RTX 4080']),
  entry('rtx-4080-super', 'GeForce RTX 4080 SUPER', ['NVIDIA GeForce RTX 4080 SUPER']),
  entry('rtx-5090', 'GeForce RTX 5090', ['NVIDIA GeForce RTX 5090']),
  entry('a100-80gb-sxm4', 'A100 80GB SXM4', ['NVIDIA A100-SXM4-80GB']),
  entry('h100-sxm5-80gb', 'H100 SXM5 80GB', ['NVIDIA H100 80GB HBM3']),
  entry('mi300x', 'Instinct MI300X', ['AMD Instinct MI300X']),
  entry('arc-b580', 'Intel Arc B580', ['Intel(R) Arc(TM) B580 Graphics']),
  entry('m3-max-40c', 'Apple M3 Max (40-core GPU)', ['Apple M3 Max']),
]
const names = (query: string) => suggestGpus(query, catalog).map((e) => e.name)

describe('suggestGpus', () => {
  it('puts the name a typo came from first', () => {
    expect(names('RTX 4080 Supr')[0]).toBe('GeForce RTX 4080 SUPER')
    expect(names('RTX 5O90')[0]).toBe('GeForce RTX 5090')
    expect(names('GeFroce RTX 4090')[0]).toBe('GeForce RTX 4090')
    expect(names('MI30X')[0]).toBe('Instinct MI300X')
    expect(names('Arc B508')[0]).toBe('Intel Arc B580')
  })

  it('reads words: a name with its form factor or size left out still finds the entry', () => {
    expect(names('H10')).toContain('H100 SXM5 80GB')
    expect(names('A100 SMX4')[0]).toBe('A100 80GB SXM4')
  })

  it('suggests a few names, and all names exactly as close as the last of them', () => {
    expect(names('RTX 4080 Supr')).toEqual(['GeForce RTX 4080 SUPER', 'GeForce RTX 4080'])
    // "40q0" is one edit from 4090 and 4080, a little more from 4080 SUPER (its SUPER left unsaid).
    expect(names('RTX 40q0')).toEqual(['GeForce RTX 4090', 'GeForce RTX 4080', 'GeForce RTX 4080 SUPER'])
    // "q000" is one edit from each of five names: none can be told from the others, so all five are shown.
    const five = ['1000', '2000', '3000', '4000', '5000'].map((n) => entry(`rtx-${n}`, `RTX ${n}`))
    expect(suggestGpus('RTX q000', five)).toEqual(five)
  })

  it('falls back on shared words when nothing is close, and is empty when nothing is shared', () => {
    expect(names('RTX 9999 Hyper').every((name) => name.includes('RTX'))).toBe(true)
    expect(names('RTX 9999 Hyper').length).toBeGreaterThan(0)
    expect(names('banana')).toEqual([])
    expect(names('   ')).toEqual([])
  })

  it('property: a one-character typo of a catalog name that matches nothing suggests that name', () => {
    const typo = fc
      .record({
        entry: fc.constantFrom(...catalog),
        at: fc.nat(),
        kind: fc.constantFrom('replace', 'drop', 'insert'),
        char: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'),
      })
      .map(({ entry, at, kind, char }) => {
        const i = at % entry.name.length
        const before = entry.name.slice(0, i)
        const after = entry.name.slice(kind === 'insert' ? i : i + 1)
        return { entry, typed: kind === 'drop' ? before + after : before + char + after }
      })
      .filter(({ typed }) => matchGpu(typed, null, catalog) === null)
    fc.assert(
      fc.property(typo, ({ entry, typed }) => {
        expect(suggestGpus(typed, catalog)).toContain(entry)
      }),
      { numRuns: 300, seed: 15 },
    )
  })
})

describe('unknownGpuError', () => {
  it('names the GPU and the flag, suggests the closest names and carries them as data', () => {
    const error = unknownGpuError('RTX 4080 Supr', catalog, {
      flag: '--gpu',
      code: 'E_GPU_UNKNOWN',
      hint: 'Or --vram.',
    })
    expect(error).toBeInstanceOf(RigfitError)
    expect(error).toMatchObject({ code: 'E_GPU_UNKNOWN', kind: 'input', exitCode: 3 })
    expect(error.message).toBe(
      `--gpu "RTX 4080 Supr": no GPU of that name in the GPU catalog (${catalog.length} models known).`,
    )
    expect(error.suggestion).toMatch(/^Did you mean: GeForce RTX 4080 SUPER, .+\? Or --vram\.$/)
    expect(error.details).toMatchObject({ gpu: 'RTX 4080 Supr', closeMatches: names('RTX 4080 Supr') })
  })

  it('says how to name a GPU when nothing is close', () => {
    const error = unknownGpuError('banana', catalog)
    expect(error.code).toBe('E_UNKNOWN_GPU')
    expect(error.message).toContain('No GPU named "banana"')
    expect(error.suggestion).toMatch(/e\.g\. "RTX 4090"/)
  })
})
