import { describe, expect, it } from 'vitest'
import { cudaContextBytes, deviceFromCatalogEntry, devicePeakTflops } from '../../src/estimate/device.js'
import type { GpuCatalogEntry } from '../../src/schemas/index.js'

const rtx4090: GpuCatalogEntry = {
  id: 'rtx-4090',
  vendor: 'nvidia',
  family: 'rtx40',
  series: 'GeForce RTX 40',
  name: 'GeForce RTX 4090',
  aliases: ['NVIDIA GeForce RTX 4090'],
  arch: 'Ada Lovelace (AD102)',
  vramGB: 24,
  devicesPerBoard: 1,
  memoryBandwidthGBs: 1008,
  fp32Tflops: 82.6,
  fp16TensorTflops: 165.2,
  tensorCores: true,
  bf16: 'yes',
  tf32: 'yes',
  fp8: 'yes',
  computeCapability: '8.9',
  tdpWatts: 450,
  unifiedMemory: false,
  unverified: [],
  source: 'NVIDIA Ada Lovelace architecture whitepaper',
}

describe('device numbers', () => {
  it('builds the estimate device from a catalog entry', () => {
    const device = deviceFromCatalogEntry(rtx4090)
    expect(device).toMatchObject({
      kind: 'cuda',
      vramBytes: 24 * 2 ** 30,
      bf16: true,
      tf32: true,
      computeCapability: '8.9',
    })
    expect(deviceFromCatalogEntry(rtx4090, 23_000 * 2 ** 20).vramBytes).toBe(23_000 * 2 ** 20)
  })

  it('splits a multi-device board among its devices', () => {
    const dual = deviceFromCatalogEntry({
      ...rtx4090,
      vendor: 'amd',
      vramGB: 128,
      devicesPerBoard: 2,
      fp16TensorTflops: 383,
      memoryBandwidthGBs: 3276.8,
    })
    expect(dual).toMatchObject({
      kind: 'rocm',
      vramBytes: 64 * 2 ** 30,
      fp16TensorTflops: 191.5,
      memoryBandwidthGBs: 1638.4,
      computeCapability: null,
    })
  })

  it('splits a multi-device board among its devices', () => {
    const dual = deviceFromCatalogEntry({
      ...rtx4090,
      vendor: 'amd',
      vramGB: 128,
      devicesPerBoard: 2,
      fp16TensorTflops: 383,
      memoryBandwidthGBs: 3276.8,
    })
    expect(dual).toMatchObject({
      kind: 'rocm',
      vramBytes: 64 * 2 ** 30,
      fp16TensorTflops: 191.5,
      memoryBandwidthGBs: 1638.4,
      computeCapability: null,
    })
  })

  it('picks the dense peak for the precision', () => {
    const device = deviceFromCatalogEntry(rtx4090)
    expect(devicePeakTflops(device, 'bf16-mixed')).toBe(165.2)
    expect(devicePeakTflops(device, 'fp32')).toBe(82.6)
    expect(devicePeakTflops({ ...device, fp32Tflops: 19.5, fp16TensorTflops: 312 }, 'fp32', true)).toBe(156)
    expect(devicePeakTflops({ ...device, fp16TensorTflops: null }, 'fp16-true')).toBe(82.6)
  })

  it('sizes the CUDA context by generation, and none off CUDA/ROCm', () => {
    expect(cudaContextBytes({ kind: 'cuda', computeCapability: '9.0' })).toBeGreaterThan(
      cudaContextBytes({ kind: 'cuda', computeCapability: '7.5' }),
    )
    expect(cudaContextBytes({ kind: 'mps', computeCapability: null })).toBe(0)
    expect(cudaContextBytes({ kind: 'rocm', computeCapability: null })).toBeGreaterThan(0)
  })
})
