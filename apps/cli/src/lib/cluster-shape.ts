import type { HardwareProfile } from '@rigfit/core'
import type { ClusterShape } from '@rigfit/exporters'
import type { Cluster } from './cluster.js'

/**
 * The allocation an export from a cluster profile is written for: the nodes that answered (the others
 * excluded), its partition, the weakest node's CPUs, and the network with the ports every node has up for it.
 */
export function clusterShape(cluster: Cluster): ClusterShape | null {
  const source = cluster.source
  if (!source) return null
  const ok = source.nodes.filter((node) => node.status === 'ok' && node.profile !== null)
  const kind = source.network.kind
  const portsOf = (profile: HardwareProfile) =>
    (profile.interconnect.ports ?? [])
      .filter((port) => port.up && port.kind === kind)
      .map((port) => port.name)
  const [first, ...rest] = ok.map((node) => portsOf(node.profile as HardwareProfile))
  const common = (first ?? []).filter((name) => rest.every((names) => names.includes(name)))
  return {
    nodes: ok.map((node) => node.name),
    excluded: source.nodes.filter((node) => !ok.includes(node)).map((node) => node.name),
    partition: source.scheduler.partition,
    cpusPerNode: cluster.profile.cpu.logicalCores,
    network: kind,
    ports: common,
    launcher: source.launcher,
  }
}
