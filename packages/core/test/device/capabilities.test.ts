import { describe, expect, it } from 'vitest'
import {
  computeCapabilityNumber,
  cpuHasBf16,
  hasFlashAttention,
  hasFp8,
  hasNativeBf16,
  hasTf32,
  isAmpereOrNewer,
  mixedPrecisionFor,
  parseComputeCapability,
} from '../../src/device/capabilities.js'
import { amdPrecision, nvidiaPrecision } from '../../src/device/number-formats.js'
import { workspacePlugins } from '../helpers/workspace-plugins.js'

// Every plugin's catalog, as shipped.
function catalogEntries() {
  return workspacePlugins().catalog
}

describe('device capabilities', () => {
  it('parses a compute capability once, into major, minor and value; anything else is unknown', () => {
    expect(parseComputeCapability('8.6')).toEqual({ major: 8, minor: 6, value: 8.6 })
    expect(parseComputeCapability('12.0')).toEqual({ major: 12, minor: 0, value: 12 })
    expect(parseComputeCapability('9')).toEqual({ major: 9, minor: 0, value: 9 })
    expect(parseComputeCapability('8.6')).toBe(parseComputeCapability('8.6'))
    for (const raw of [null, undefined, '', 'gfx942', 'n/a']) {
      expect(parseComputeCapability(raw), String(raw)).toBeNull()
      expect(computeCapabilityNumber(raw), String(raw)).toBeNaN()
    }
  })

  it('agrees with the profiler format table for every NVIDIA GPU of the catalog', () => {
    const nvidia = catalogEntries().filter((entry) => entry.vendor === 'nvidia')
    expect(nvidia.length).toBeGreaterThan(20)
    for (const entry of nvidia) {
      const device = { kind: 'cuda' as const, computeCapability: entry.computeCapability }
      const formats = nvidiaPrecision(entry.computeCapability, entry.name)
      const cc = computeCapabilityNumber(entry.computeCapability)
      expect(isAmpereOrNewer(device), entry.name).toBe(cc >= 8)
      expect(hasNativeBf16(device), entry.name).toBe(formats.bf16 === 'yes')
      expect(hasTf32(device), entry.name).toBe(formats.tf32 === 'yes')
      expect(hasFp8(device), entry.name).toBe(formats.fp8 === 'yes')
      expect(hasFlashAttention(device), entry.name).toBe(cc >= 8)
      // The catalog's own bf16 column (what the planner reads) says the same.
      expect(entry.bf16 === 'yes', entry.name).toBe(hasNativeBf16(device))
    }
  })

  it('gives TF32 to AMD CDNA 3 only, as the gfx format table does', () => {
    for (const target of [
      'gfx90a',
      'gfx908',
      'gfx940',
      'gfx942',
      'gfx950',
      'gfx1100',
      'gfx1201',
      'gfx1030',
    ]) {
      expect(hasTf32({ kind: 'rocm', computeCapability: target }), target).toBe(
        amdPrecision(target).tf32 === 'yes',
      )
    }
    expect(hasTf32({ kind: 'cuda', computeCapability: '7.5' })).toBe(false)
    expect(hasFlashAttention({ kind: 'rocm', computeCapability: 'gfx942' })).toBe(false)
  })

  it('counts a CPU as bf16 only with AVX512_BF16 or AMX; the mixed-precision rung follows', () => {
    const plain = cpuHasBf16({ avx512bf16: false, amx: false })
    expect(plain).toBe(false)
    expect(cpuHasBf16({ avx512bf16: true, amx: false })).toBe(true)
    expect(cpuHasBf16({ avx512bf16: false, amx: true })).toBe(true)
    expect(mixedPrecisionFor({ kind: 'cpu', computeCapability: null, cpuBf16: false })).toBeNull()
    expect(mixedPrecisionFor({ kind: 'cpu', computeCapability: null, cpuBf16: true })).toBe('bf16-mixed')
    expect(mixedPrecisionFor({ kind: 'cuda', computeCapability: '7.0' })).toBe('fp16-mixed')
    expect(mixedPrecisionFor({ kind: 'cuda', computeCapability: '8.0' })).toBe('bf16-mixed')
    expect(mixedPrecisionFor({ kind: 'cuda', computeCapability: null })).toBe('fp16-mixed')
    expect(mixedPrecisionFor({ kind: 'mps', computeCapability: null })).toBe('fp16-mixed')
    expect(mixedPrecisionFor({ kind: 'rocm', computeCapability: 'gfx942' })).toBe('bf16-mixed')
  })
})
