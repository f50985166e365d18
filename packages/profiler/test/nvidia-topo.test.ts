import { describe, expect, it } from 'vitest'
import { parseNvidiaTopo } from '../src/parsers/nvidia-topo.js'
import { fixture } from './helpers.js'

describe('nvidia-smi topo -m', () => {
  it('reads an NVLink machine (DGX A100: every pair NV12, NICs ignored)', () => {
    const topo = parseNvidiaTopo(fixture('nvidia-topo/dgx-a100-80gb.txt'))
    expect(topo.gpuCount).toBe(8)
    expect(topo.links).toHaveLength(28)
    expect(topo.links.every((link) => link.kind === 'nvlink')).toBe(true)
    expect(topo.links[0]).toEqual({ a: 0, b: 1, kind: 'nvlink', detail: 'NV12: 12 bonded NVLinks' })
  })

  it('reads a one-GPU VM: no links, no peers (a real H100 matrix with its CPU and NUMA affinity columns)', () => {
    const topo = parseNvidiaTopo(fixture('nvidia-topo/cloud-h100-sxm5.txt'))
    expect(topo.gpuCount).toBe(1)
    expect(topo.links).toEqual([])
    expect(topo.problems).toEqual([])
  })

  it('reads a two-GPU NVLink bridge with ANSI-underlined headers', () => {
    const topo = parseNvidiaTopo(fixture('nvidia-topo/dual-rtx3090-nvlink.txt'))
    expect(topo.links).toEqual([{ a: 0, b: 1, kind: 'nvlink', detail: 'NV4: 4 bonded NVLinks' }])
  })

  it('reads a PCIe machine across two sockets', () => {
    const topo = parseNvidiaTopo(fixture('nvidia-topo/quad-rtx4090-pcie.txt'))
    expect(topo.gpuCount).toBe(4)
    expect(topo.links.every((link) => link.kind === 'pcie')).toBe(true)
    expect(topo.links.find((link) => link.a === 0 && link.b === 1)?.detail).toMatch(/^PHB/)
    expect(topo.links.find((link) => link.a === 0 && link.b === 2)?.detail).toMatch(/^SYS/)
    expect(topo.links.find((link) => link.a === 2 && link.b === 3)?.detail).toMatch(/^PIX/)
  })

  it('answers no GPUs for output without a matrix', () => {
    expect(parseNvidiaTopo(fixture('nvidia-smi/driver-not-loaded.txt'))).toEqual({
      gpuCount: 0,
      links: [],
      problems: [],
    })
  })
})
