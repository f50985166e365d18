import { z } from 'zod'
import { HardwareProfile, NodeNetwork } from './hardware-profile.js'

export const CLUSTER_PROFILE_SCHEMA_VERSION = 1

/** How one node answered `rigfit profile --json`: its profile, or why there is none. */
export const ClusterNodeStatus = z.enum(['ok', 'failed', 'timeout', 'invalid'])
export type ClusterNodeStatus = z.infer<typeof ClusterNodeStatus>

export const ClusterNode = z.object({
  /** The scheduler's name for the node (Slurm's NodeName), which may differ from its host name. */
  name: z.string().min(1),
  status: ClusterNodeStatus,
  /** What went wrong on this node (exit code, deadline, what it printed); null when it answered. */
  error: z.string().nullable(),
  profile: HardwareProfile.nullable(),
  /** The leaf switch the scheduler's topology puts the node under; null without a topology. */
  switch: z.string().nullable(),
})
export type ClusterNode = z.infer<typeof ClusterNode>

/** The network between the nodes: the best kind every answering node has, at the slowest of their speeds. */
export const ClusterNetwork = z.object({
  kind: NodeNetwork,
  /** Per node, Gbit/s: the slowest node's fastest port of that kind; null when no port reports a speed. */
  speedGbps: z.number().nonnegative().max(1_000_000).nullable(),
  /** Leaf switches the nodes hang from (Slurm's topology); null when the scheduler has no topology. */
  switches: z.number().int().nonnegative().nullable(),
  /** How it was decided, in words. */
  detail: z.string(),
})
export type ClusterNetwork = z.infer<typeof ClusterNetwork>

/** One way the nodes differ: the field in words, and each node's value. */
export const ClusterDifference = z.object({
  field: z.string(),
  values: z.record(z.string(), z.string()),
})
export type ClusterDifference = z.infer<typeof ClusterDifference>

export const ClusterProfile = z.object({
  schemaVersion: z.literal(CLUSTER_PROFILE_SCHEMA_VERSION),
  /** Tells a cluster profile from a node's HardwareProfile in the same `--from` flag. */
  kind: z.literal('cluster'),
  createdAt: z.string(),
  rigfitVersion: z.string(),
  scheduler: z.object({
    kind: z.literal('slurm'),
    jobId: z.string().min(1),
    partition: z.string().nullable(),
    /** `existing`: profiled inside the user's allocation; `rigfit`: rigfit asked for it (salloc) and released it. */
    allocation: z.enum(['existing', 'rigfit']),
  }),
  /** The command line that ran rigfit on every node, which the cluster's exports reuse. */
  launcher: z.array(z.string()).min(1),
  nodes: z.array(ClusterNode).min(1),
  network: ClusterNetwork,
  differences: z.array(ClusterDifference),
  /** Plain-language findings: nodes that did not answer, the topology that was not available. */
  notes: z.array(z.string()),
})
export type ClusterProfile = z.infer<typeof ClusterProfile>
