import { describeNodeDevices, weakestNodeIndex } from '../cluster/cluster-nodes.js'
import { RigfitError } from '../errors.js'
import type { ClusterProfile } from '../schemas/cluster-profile.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { Advice } from '../schemas/training-plan.js'

export interface Cluster {
  /** The node every node is planned as: the weakest one. */
  profile: HardwareProfile
  nodes: number
  heterogeneous: boolean
  warning: string | null
  /** Every warning a plan for this cluster carries: the differences, and nodes that did not answer. */
  advice: Advice[]
  /** The cluster profile it came from (`--from cluster.json`); null for `--cluster FILE…`. */
  source: ClusterProfile | null
}

const advice = (id: string, message: string): Advice => ({
  id,
  message,
  source: 'generator',
  expectedGain: null,
})

function heterogeneity(
  profiles: HardwareProfile[],
  names: string[],
): { heterogeneous: boolean; warning: string | null; weakest: number } {
  const weakest = weakestNodeIndex(profiles)
  const kinds = new Set(profiles.map(describeNodeDevices))
  const heterogeneous = kinds.size > 1
  const slowest = profiles[weakest] as HardwareProfile
  return {
    heterogeneous,
    weakest,
    warning: heterogeneous
      ? `The nodes differ (${[...kinds].join('; ')}): every node is planned as the weakest, ${names[weakest]} (${describeNodeDevices(slowest)}), so the stronger nodes idle part of each step.`
      : null,
  }
}

/**
 * Several saved profiles, one per node (`--cluster FILE…`, named by `names`): data-parallel training steps at the
 * pace of the slowest node and must fit the smallest, so the plan is made for the weakest node on every node, with
 * a warning when the nodes differ.
 */
export function clusterOfNodes(profiles: HardwareProfile[], names: string[]): Cluster {
  if (profiles.length < 2) {
    throw new RigfitError(
      'usage',
      'E_CLUSTER_SIZE',
      '--cluster needs two or more profile files, one per node.',
      {
        suggestion:
          'Save each node with `rigfit profile --out node-a.json`, then `rigfit plan --cluster node-a.json node-b.json`.',
      },
    )
  }
  const { heterogeneous, warning, weakest } = heterogeneity(profiles, names)
  return {
    profile: profiles[weakest] as HardwareProfile,
    nodes: profiles.length,
    heterogeneous,
    warning,
    advice: warning ? [advice('heterogeneous-cluster', warning)] : [],
    source: null,
  }
}

/**
 * A cluster profile (`rigfit profile --slurm`) planned as `--cluster` plans its files: the nodes that answered,
 * each planned as the weakest, on the network measured between them. Nodes that did not answer are left out of
 * the job and named; each way the nodes differ is a warning naming every node's value.
 */
export function clusterFromProfile(cluster: ClusterProfile, path: string): Cluster {
  const ok = cluster.nodes.filter((node) => node.status === 'ok' && node.profile !== null)
  if (ok.length === 0) {
    throw new RigfitError(
      'input',
      'E_CLUSTER_EMPTY',
      `${path}: no node of the cluster has a profile (${cluster.nodes.map((n) => `${n.name}: ${n.status}`).join(', ')}).`,
      {
        suggestion:
          'Profile the cluster again with `rigfit profile --slurm --out cluster.json` once the nodes answer.',
      },
    )
  }
  const profiles = ok.map((node) => node.profile as HardwareProfile)
  const names = ok.map((node) => node.name)
  const { heterogeneous, warning, weakest } = heterogeneity(profiles, names)
  const notes: Advice[] = []
  if (warning) notes.push(advice('heterogeneous-cluster', warning))
  for (const difference of cluster.differences) {
    const values = Object.entries(difference.values).map(([node, value]) => `${node}: ${value}`)
    notes.push(
      advice('cluster-difference', `The nodes differ in ${difference.field} (${values.join('; ')}).`),
    )
  }
  const missing = cluster.nodes.filter((node) => !ok.includes(node))
  if (missing.length > 0) {
    notes.push(
      advice(
        'cluster-nodes-missing',
        `Planned for the ${ok.length} node(s) that answered; ${missing.map((n) => `${n.name} (${n.status})`).join(', ')} had no profile and ${missing.length === 1 ? 'is' : 'are'} left out of the job.`,
      ),
    )
  }
  const profile = profiles[weakest] as HardwareProfile
  const network = cluster.network.kind
  return {
    // The network between the nodes is the cluster's, as measured on them, not what one node says alone.
    profile:
      network === 'unknown' ? profile : { ...profile, interconnect: { ...profile.interconnect, network } },
    nodes: ok.length,
    heterogeneous,
    warning,
    advice: notes,
    source: cluster,
  }
}
