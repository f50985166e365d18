import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

type Advice = { id: string }

describe('--interconnect: the planned node is linked as the user says', () => {
  it.each([
    ['A100 80GB PCIe', 2],
    ['RTX 4090', 4],
    ['L40S', 8],
  ])('%s x %i: nvlink and pcie set every GPU pair, and NVLink plans are never slower', (gpu, gpus) => {
    const base = ['--gpu', gpu, '--gpus', String(gpus), '--cpus', '64']
    for (const link of ['nvlink', 'pcie']) {
      const { profile } = rigfitJson(['analyze', '--profile-only', ...base, '--interconnect', link])
      expect(profile.interconnect.kind).toBe(link)
      expect(profile.interconnect.links).toHaveLength((gpus * (gpus - 1)) / 2)
      expect(profile.overrides).toContain(`interconnect=${link}`)
    }
    // The same settings on both links: only the communication differs, in time and in NCCL's buffers (two
    // channels per NVLink, two over PCIe).
    const pins = ['--model', 'llama-3.2-1b', '--micro-batch', '2', '--sharding', 'fsdp', '--seq', '1024']
    const nvlink = rigfitJson(['plan', ...base, ...pins, '--interconnect', 'nvlink'])
    const pcie = rigfitJson(['plan', ...base, ...pins, '--interconnect', 'pcie'])
    const withoutBuffers = (plan: typeof nvlink) =>
      plan.memory.perDevice.total - plan.memory.perDevice.communication
    expect(withoutBuffers(nvlink)).toBe(withoutBuffers(pcie))
    expect(pcie.memory.perDevice.communication).toBeGreaterThan(0)
    expect(nvlink.memory.perDevice.communication).toBeGreaterThan(pcie.memory.perDevice.communication)
    expect(nvlink.throughput.tokensPerSecond).toBeGreaterThan(pcie.throughput.tokensPerSecond)
  })

  it('infiniband is the network between nodes: the multi-node plan no longer assumes one', () => {
    const asked = [
      '--gpu',
      'A100 80GB',
      '--gpus',
      '4',
      '--nodes',
      '2',
      '--cpus',
      '64',
      '--model',
      'llama-3.1-8b',
    ]
    const assumed = rigfitJson(['plan', ...asked])
    expect(assumed.warnings.map((w: Advice) => w.id)).toContain('assumed-network')
    const stated = rigfitJson(['plan', ...asked, '--interconnect', 'infiniband'])
    expect(stated.warnings.map((w: Advice) => w.id)).not.toContain('assumed-network')
    const { profile } = rigfitJson([
      'analyze',
      '--profile-only',
      ...asked.slice(0, 4),
      '--interconnect',
      'infiniband',
    ])
    expect(profile.interconnect.network).toBe('infiniband')
  })

  it.each([
    ['ND96amsr_A100_v4', null],
    ['p4d.24xlarge', null],
    ['a2-megagpu-16g', 'ethernet-between-nodes'],
  ])('the %s preset carries its network (%s)', (instance, warning) => {
    const plan = rigfitJson(['plan', '--instance', instance, '--nodes', '2', '--model', 'llama-3.1-8b'])
    const ids = plan.warnings.map((w: Advice) => w.id)
    expect(ids).not.toContain('assumed-network')
    if (warning) expect(ids).toContain(warning)
    else expect(ids).not.toContain('ethernet-between-nodes')
  })

  it('a GPU link on a node with one GPU is refused', () => {
    const result = rigfit(['plan', '--gpu', 'RTX 4090', '--interconnect', 'nvlink'])
    expect(result.status).toBe(2)
    expect(result.stderr).toMatch(/--interconnect nvlink links GPUs, and this node has one/)
  })
})
