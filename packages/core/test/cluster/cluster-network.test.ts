import { describe, expect, it } from 'vitest'
import { clusterNetwork, nodeNetwork } from '../../src/cluster/cluster-network.js'
import type { HardwareProfile, NetworkPort } from '../../src/schemas/hardware-profile.js'
import { machine } from '../helpers/machines.js'

const base = machine('server-a100-40gb')
const withPorts = (ports: NetworkPort[]): HardwareProfile => ({
  ...base,
  interconnect: { ...base.interconnect, ports },
})
const port = (kind: NetworkPort['kind'], speedGbps: number | null, up = true): NetworkPort => ({
  name: `${kind}-${speedGbps}`,
  kind,
  speedGbps,
  up,
})

describe('the network between nodes', () => {
  it("is a node's best port that is up, at that port's speed", () => {
    expect(nodeNetwork(withPorts([port('ethernet', 25), port('infiniband', 200)]))).toEqual({
      kind: 'infiniband',
      speedGbps: 200,
    })
    expect(nodeNetwork(withPorts([port('ethernet', 25), port('infiniband', 200, false)]))).toEqual({
      kind: 'ethernet',
      speedGbps: 25,
    })
    expect(nodeNetwork(withPorts([]))).toEqual({ kind: 'unknown', speedGbps: null })
  })

  it('is the kind every node has, at the slowest node, over every mix of nodes (a sweep)', () => {
    const kinds: NetworkPort['kind'][] = ['infiniband', 'roce', 'ethernet']
    const rank = (k: string) => kinds.indexOf(k as NetworkPort['kind'])
    for (const a of kinds)
      for (const b of kinds)
        for (const speeds of [
          [100, 200],
          [400, 10],
        ]) {
          const [sa, sb] = speeds as [number, number]
          const net = clusterNetwork([withPorts([port(a, sa)]), withPorts([port(b, sb)])], 2)
          const worst = rank(a) >= rank(b) ? a : b
          expect(net.kind).toBe(worst)
          expect(net.switches).toBe(2)
          // Only nodes with the common kind report its speed; the other has it only as a slower kind.
          expect(net.speedGbps).toBe(a === b ? Math.min(sa, sb) : null)
        }
  })

  it('is unknown when any node shows no usable port, and says so', () => {
    const net = clusterNetwork([withPorts([port('infiniband', 200)]), withPorts([])], null)
    expect(net.kind).toBe('unknown')
    expect(net.detail).toMatch(/no topology/)
  })
})
