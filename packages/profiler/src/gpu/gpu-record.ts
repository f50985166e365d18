import type { Gpu } from '@rigfit/core'

/** A GPU with every fact unknown except the ones given: vendor mappers fill in what their tool reports. */
export function gpuRecord(
  fields: Pick<Gpu, 'index' | 'vendor' | 'name' | 'vramTotalBytes' | 'detectedBy'> & Partial<Gpu>,
): Gpu {
  return {
    uuid: null,
    busId: null,
    family: 'unknown',
    arch: null,
    integrated: false,
    unifiedMemory: false,
    vramFreeBytes: null,
    vramUsableBytes: fields.vramTotalBytes,
    computeCapability: null,
    gfxTarget: null,
    metalFamily: null,
    tensorCores: null,
    fp16: 'unknown',
    bf16: 'unknown',
    tf32: 'unknown',
    fp8: 'unknown',
    int8: 'unknown',
    memoryBandwidthGBs: null,
    fp32Tflops: null,
    fp16TensorTflops: null,
    tdpWatts: null,
    powerLimitWatts: null,
    powerDrawWatts: null,
    temperatureC: null,
    utilizationPercent: null,
    clocks: { smMHz: null, memMHz: null, maxSmMHz: null },
    pcie: { gen: null, width: null, maxGen: null, maxWidth: null },
    driverVersion: null,
    migMode: 'unknown',
    catalog: null,
    ...fields,
  }
}
