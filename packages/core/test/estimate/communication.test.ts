import { describe, expect, it } from 'vitest'
import { communicationBytes } from '../../src/estimate/communication.js'
import {
  NCCL_CHANNELS,
  NCCL_CONNECTION_BYTES,
  NCCL_CONNECTIONS_PER_CHANNEL,
} from '../../src/estimate/constants.js'
import { estimate } from '../../src/estimate/estimate.js'
import { MODEL_CATALOG } from '../../src/model/catalog.js'
import { type EstimateDevice, EstimateInput } from '../../src/schemas/index.js'

const MIB = 2 ** 20
const LINKS = ['nvlink', 'xgmi', 'pcie', 'mixed', 'none', 'unknown', null] as const
const device = (kind: EstimateDevice['kind'], computeCapability: string | null): EstimateDevice => ({
  name: `${kind} ${computeCapability ?? ''}`,
  kind,
  vramBytes: 80 * 2 ** 30,
  fp16TensorTflops: 312,
  fp32Tflops: 19.5,
  memoryBandwidthGBs: 2039,
  bf16: true,
  tf32: true,
  computeCapability,
})
const DEVICES = [
  device('cuda', '7.0'),
  device('cuda', '8.0'),
  device('cuda', '8.9'),
  device('cuda', '9.0'),
  device('cuda', '10.0'),
  device('cuda', null),
  device('rocm', null),
  device('mps', null),
  device('xpu', null),
  device('cpu', null),
]

describe('NCCL buffers', () => {
  it('are held by every rank of a CUDA or ROCm job of several ranks, and by nothing else', () => {
    for (const d of DEVICES)
      for (const interconnect of LINKS)
        for (const gpus of [1, 2, 4, 8])
          for (const nodes of [1, 2]) {
            const bytes = communicationBytes({ gpus, nodes, interconnect }, d)
            const label = `${d.name} ${interconnect} ${gpus}x${nodes}`
            if (gpus * nodes === 1 || (d.kind !== 'cuda' && d.kind !== 'rocm')) expect(bytes, label).toBe(0)
            else {
              // A whole number of channels, each with its connections' three protocol FIFOs.
              const channels = bytes / (NCCL_CONNECTIONS_PER_CHANNEL * NCCL_CONNECTION_BYTES)
              expect(Number.isInteger(channels), label).toBe(true)
              expect(channels, label).toBeGreaterThanOrEqual(NCCL_CHANNELS.pcie)
              expect(channels, label).toBeLessThanOrEqual(32)
              // The rank count does not change it: the ring has two neighbours at any scale.
              expect(bytes, label).toBe(communicationBytes({ gpus: 2, nodes: 1, interconnect }, d))
            }
          }
  })

  it('follow the link: NVLink by generation above PCIe, and a link not known counts as the larger', () => {
    expect(NCCL_CONNECTION_BYTES / MIB).toBeCloseTo(9.1875)
    const on = (d: EstimateDevice, interconnect: (typeof LINKS)[number]) =>
      communicationBytes({ gpus: 8, nodes: 1, interconnect }, d)
    expect(on(device('cuda', '9.0'), 'nvlink') / MIB).toBeCloseTo(882)
    expect(on(device('cuda', '8.0'), 'pcie') / MIB).toBeCloseTo(55.125)
    const generations = ['7.0', '8.0', '9.0'].map((cc) => on(device('cuda', cc), 'nvlink'))
    expect(generations).toEqual([...generations].sort((a, b) => a - b))
    for (const d of DEVICES.filter((x) => x.kind === 'cuda' || x.kind === 'rocm')) {
      expect(on(d, 'nvlink'), d.name).toBeGreaterThan(on(d, 'pcie'))
      expect(on(d, null), d.name).toBe(on(d, d.kind === 'rocm' ? 'xgmi' : 'nvlink'))
      expect(on(d, 'unknown'), d.name).toBe(on(d, null))
    }
  })

  it('are in what nvidia-smi shows for every catalog model and strategy, outside what the allocator reserves', () => {
    const d = device('cuda', '9.0')
    for (const model of MODEL_CATALOG)
      for (const sharding of ['none', 'zero1', 'zero2', 'zero3', 'fsdp'] as const)
        for (const gpus of [1, 8]) {
          const input = EstimateInput.parse({ model, seq: 512, microBatch: 1, gpus, sharding, device: d })
          const m = estimate(input).perDevice
          expect(m.communication, `${model.id} ${sharding} ${gpus}`).toBe(
            Math.round(communicationBytes(input, d)),
          )
          expect(Math.abs(m.total - (m.reserved + m.cudaContext + m.communication))).toBeLessThanOrEqual(2)
        }
  })
})
