import {
  CLUSTER_PROFILE_SCHEMA_VERSION,
  type ClusterNode,
  type ClusterProfile,
} from '../schemas/cluster-profile.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import { clusterNetwork } from './cluster-network.js'
import { clusterDifferences, describeNodeDevices, mixedGpuKinds } from './cluster-nodes.js'

export interface ClusterProfileInput {
  createdAt: string
  rigfitVersion: string
  scheduler: ClusterProfile['scheduler']
  launcher: string[]
  /** Every node of the allocation, in its order, answered or not (`switch` is filled here). */
  nodes: Omit<ClusterNode, 'switch'>[]
  /** Node -> leaf switch from the scheduler's topology; empty without one. */
  leafSwitch: Map<string, string>
  /** Findings of the gathering itself (a topology that could not be read). */
  notes: string[]
}

const answered = (node: ClusterNode): node is ClusterNode & { profile: HardwareProfile } =>
  node.status === 'ok' && node.profile !== null

/**
 * One cluster profile from every node's answer: the network between the answering nodes, what differs between
 * them, and a note naming each node that did not answer and each node that mixes GPU models.
 */
export function buildClusterProfile(input: ClusterProfileInput): ClusterProfile {
  const nodes: ClusterNode[] = input.nodes.map((node) => ({
    ...node,
    switch: input.leafSwitch.get(node.name) ?? null,
  }))
  const ok = nodes.filter(answered)
  const switches =
    input.leafSwitch.size === 0
      ? null
      : new Set(ok.map((node) => node.switch).filter((name) => name !== null)).size
  const notes = [...input.notes]
  for (const node of nodes) {
    if (!answered(node)) notes.push(`Node ${node.name} has no profile (${node.status}): ${node.error ?? ''}`)
  }
  for (const node of ok) {
    const mixed = mixedGpuKinds(node.profile)
    if (mixed.length > 0)
      notes.push(
        `Node ${node.name} mixes GPU models (${mixed.join(', ')}): it trains on ${describeNodeDevices(node.profile)} only.`,
      )
  }
  return {
    schemaVersion: CLUSTER_PROFILE_SCHEMA_VERSION,
    kind: 'cluster',
    createdAt: input.createdAt,
    rigfitVersion: input.rigfitVersion,
    scheduler: input.scheduler,
    launcher: input.launcher,
    nodes,
    network: clusterNetwork(
      ok.map((node) => node.profile),
      switches,
    ),
    differences: clusterDifferences(ok),
    notes,
  }
}
