import { join } from 'node:path'
import { Flags } from '@oclif/core'
import { type ClusterProfile, networkName, RigfitError } from '@rigfit/core'
import { profileSlurmAllocation, saveClusterProfile } from '@rigfit/profiler'

/** The flags of `rigfit profile --slurm`: where the allocation comes from and how long each node may take. */
export const slurmProfileFlags = {
  slurm: Flags.boolean({
    description:
      'Profile every node of a Slurm allocation (srun on each node) into one cluster profile; outside an allocation, with --partition and --nodes, allocate the nodes (salloc) and release them.',
    exclusive: ['from', 'gpu', 'gpus', 'vram', 'ram', 'cpus', 'interconnect', 'benchmark'],
    helpGroup: 'CLUSTER',
  }),
  partition: Flags.string({
    description: 'With --slurm outside an allocation: the partition to allocate --nodes from.',
    dependsOn: ['slurm', 'nodes'],
    helpGroup: 'CLUSTER',
    helpValue: 'NAME',
  }),
  nodes: Flags.integer({
    description: 'With --slurm outside an allocation: how many nodes to allocate from --partition.',
    dependsOn: ['slurm', 'partition'],
    helpGroup: 'CLUSTER',
    helpValue: 'N',
  }),
  'node-timeout': Flags.integer({
    description: 'With --slurm: seconds each node may take to answer; a node past it is named and marked.',
    default: 180,
    min: 5,
    max: 3600,
    helpGroup: 'CLUSTER',
    helpValue: 'SECONDS',
  }),
  'alloc-timeout': Flags.integer({
    description: 'With --slurm --partition: seconds to wait for Slurm to grant the nodes.',
    default: 300,
    min: 1,
    max: 86_400,
    helpGroup: 'CLUSTER',
    helpValue: 'SECONDS',
  }),
}

export interface SlurmProfileFlagValues {
  partition?: string | undefined
  nodes?: number | undefined
  'node-timeout': number
  'alloc-timeout': number
}

/**
 * Profiles the allocation with this very rigfit on every node (the same Node.js and entry script, which a
 * cluster's shared file system gives every node) and saves the cluster profile when `out` is given.
 */
export async function profileCluster(
  root: string,
  flags: SlurmProfileFlagValues,
  out: { path: string | undefined; force: boolean },
  onNode: (line: string) => void,
): Promise<ClusterProfile> {
  if (flags.nodes !== undefined && flags.nodes < 1) {
    throw new RigfitError(
      'usage',
      'E_SLURM_NO_NODES',
      `--nodes ${flags.nodes} asks for an allocation with no node.`,
      {
        suggestion: 'Ask for at least one node, e.g. --nodes 2.',
      },
    )
  }
  const cluster = await profileSlurmAllocation({
    launcher: [process.execPath, join(root, 'bin', 'run.js')],
    nodeTimeoutMs: flags['node-timeout'] * 1000,
    env: process.env,
    request:
      flags.partition !== undefined && flags.nodes !== undefined
        ? { partition: flags.partition, nodes: flags.nodes, waitMs: flags['alloc-timeout'] * 1000 }
        : null,
    onNode: (node) =>
      onNode(node.status === 'ok' ? `Node ${node.name}: profiled` : `Node ${node.name}: ${node.error}`),
  })
  if (out.path) await saveClusterProfile(out.path, cluster, { force: out.force })
  return cluster
}

/** The cluster profile in a few lines: each node, the network, the differences and the notes. */
export function renderClusterProfile(cluster: ClusterProfile): string {
  const lines = [
    `Slurm job ${cluster.scheduler.jobId}${cluster.scheduler.partition ? ` (partition ${cluster.scheduler.partition})` : ''}: ${cluster.nodes.length} node(s)`,
  ]
  for (const node of cluster.nodes) {
    const p = node.profile
    const devices = p
      ? p.gpus.length > 0
        ? `${p.gpus.length} GPU(s): ${[...new Set(p.gpus.map((gpu) => gpu.name))].join(', ')}`
        : `CPU only (${p.cpu.brand})`
      : node.status
    lines.push(
      `  ${node.name}: ${devices}${p ? `, ${p.cpu.logicalCores} CPUs, ${(p.memory.totalBytes / 2 ** 30).toFixed(1)} GiB RAM` : ''}${node.switch ? `, switch ${node.switch}` : ''}`,
    )
  }
  const net = cluster.network
  lines.push(`Network between nodes: ${networkName(net.kind)} (${net.detail})`)
  for (const difference of cluster.differences) {
    lines.push(
      `Differs: ${difference.field}: ${Object.entries(difference.values)
        .map(([node, value]) => `${node} ${value}`)
        .join('; ')}`,
    )
  }
  lines.push(...cluster.notes.map((note) => `Note: ${note}`))
  return `${lines.join('\n')}\n`
}
