import type { Command } from '@oclif/core'
import {
  type Cluster,
  clusterFromProfile,
  clusterOfNodes,
  type HardwareProfile,
  networkName,
} from '@rigfit/core'
import { applyOverrides, hasOverrides, loadProfile, loadProfileDocument } from '@rigfit/profiler'
import { loadAllCatalogEntries } from './catalog.js'
import { inputTimeoutMs } from './input-timeout.js'
import { type InstanceFlagValues, resolvePlanningProfile } from './instance.js'
import { overridesFromFlags } from './profile-source.js'

export type { Cluster }

/** `--cluster FILE…`: the saved node profiles, planned as core plans a cluster (each node as the weakest). */
export async function loadCluster(files: string[]): Promise<Cluster> {
  // Fewer than two files is a usage error before any file is read.
  const profiles = files.length < 2 ? [] : await Promise.all(files.map((file) => loadProfile(file)))
  return clusterOfNodes(profiles, files)
}

/** What a planning command plans for: one machine, or a cluster profile given to `--from`. */
export async function resolvePlanningTarget(
  command: Command,
  flags: InstanceFlagValues & { timeout?: number | undefined },
): Promise<{ profile: HardwareProfile; cluster: Cluster | null }> {
  if (flags.from !== undefined && !flags.instance) {
    // Read once: --from may be a FIFO or pipe, which a second read would wait on for ever.
    const document = await loadProfileDocument(flags.from, inputTimeoutMs(flags))
    const cluster = document.kind === 'cluster' ? clusterFromProfile(document.cluster, flags.from) : null
    const base = cluster?.profile ?? (document.kind === 'node' ? document.profile : null)
    if (base === null) throw new Error('a cluster profile without its weakest node')
    const overrides = overridesFromFlags(flags)
    const profile = hasOverrides(overrides)
      ? applyOverrides(base, overrides, await loadAllCatalogEntries(command))
      : base
    return { profile, cluster: cluster ? { ...cluster, profile } : null }
  }
  return { profile: await resolvePlanningProfile(command, flags), cluster: null }
}

/** One line on the cluster a plan was made for, for the terminal. */
export function clusterLine(cluster: Cluster): string {
  const source = cluster.source
  if (!source) return `Planned for ${cluster.nodes} nodes, each as the weakest.`
  return `Planned for ${cluster.nodes} node(s) of Slurm job ${source.scheduler.jobId}, each as the weakest; network between nodes: ${networkName(source.network.kind)}.`
}
