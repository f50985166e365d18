import type { ClusterNetwork } from '../schemas/cluster-profile.js'
import type { HardwareProfile, NetworkPort, NodeNetwork } from '../schemas/hardware-profile.js'

/** Best first: what NCCL would pick between the nodes when every node has it. */
const RANK: NetworkPort['kind'][] = ['infiniband', 'roce', 'ethernet']
const NAMES: Record<NodeNetwork, string> = {
  infiniband: 'InfiniBand',
  roce: 'RoCE (RDMA over Ethernet)',
  efa: 'EFA',
  ethernet: 'Ethernet',
  unknown: 'unknown',
}

export function networkName(kind: NodeNetwork): string {
  return NAMES[kind]
}

/** A node's best link to the others: its best kind of port that is up, and the fastest such port's speed. */
export function nodeNetwork(profile: HardwareProfile): { kind: NodeNetwork; speedGbps: number | null } {
  const up = (profile.interconnect.ports ?? []).filter((port) => port.up)
  for (const kind of RANK) {
    const ports = up.filter((port) => port.kind === kind)
    if (ports.length === 0) continue
    const speeds = ports.map((port) => port.speedGbps).filter((speed): speed is number => speed !== null)
    return { kind, speedGbps: speeds.length > 0 ? Math.max(...speeds) : null }
  }
  return { kind: 'unknown', speedGbps: null }
}

/**
 * The network between the nodes: the best kind of link every answering node has (gradients cross at the pace of
 * the worst node), at the slowest node's speed; a node whose ports are unknown makes the whole network unknown.
 * `leafSwitches` comes from the scheduler's topology, null when it has none.
 */
export function clusterNetwork(profiles: HardwareProfile[], leafSwitches: number | null): ClusterNetwork {
  const perNode = profiles.map(nodeNetwork)
  const switches =
    leafSwitches === null
      ? 'Slurm reports no topology'
      : `${leafSwitches} leaf switch${leafSwitches === 1 ? '' : 'es'} in Slurm's topology`
  if (perNode.length === 0 || perNode.some((node) => node.kind === 'unknown')) {
    return {
      kind: 'unknown',
      speedGbps: null,
      switches: leafSwitches,
      detail: `some node shows no InfiniBand, RoCE or physical Ethernet port that is up; ${switches}`,
    }
  }
  const worst = Math.max(...perNode.map((node) => RANK.indexOf(node.kind as NetworkPort['kind'])))
  const kind = RANK[worst] as NetworkPort['kind']
  // Each node's fastest port of the common kind; a node with the kind only below it counts its own best.
  const speeds = profiles.map((profile) => {
    const ports = (profile.interconnect.ports ?? []).filter((port) => port.up && port.kind === kind)
    const known = ports.map((port) => port.speedGbps).filter((speed): speed is number => speed !== null)
    return known.length > 0 ? Math.max(...known) : null
  })
  const known = speeds.filter((speed): speed is number => speed !== null)
  const speedGbps = known.length === speeds.length ? Math.min(...known) : null
  return {
    kind,
    speedGbps,
    switches: leafSwitches,
    detail: `${NAMES[kind]} on every node${speedGbps === null ? '' : `, ${speedGbps} Gbit/s at the slowest`}; ${switches}`,
  }
}
