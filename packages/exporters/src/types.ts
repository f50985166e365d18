import type { Advice, NodeNetwork, TrainingPlan } from '@rigfit/core'

/** One file an export produces; `path` is relative to the output directory and uses forward slashes. */
export interface ExportFile {
  path: string
  content: string
  /** Launch scripts are written with the executable bit. */
  executable: boolean
}

/**
 * The Slurm allocation a cluster profile describes (`rigfit profile --slurm`): a job exported from it is written
 * for exactly that shape.
 */
export interface ClusterShape {
  /** The nodes that answered, in the allocation's order; the first is the rendezvous host. */
  nodes: string[]
  /** Nodes of the allocation that gave no profile: kept out of the job. */
  excluded: string[]
  partition: string | null
  /** Logical CPUs of the weakest node: what the tasks of one node may hold together. */
  cpusPerNode: number
  network: NodeNetwork
  /** Ports of that network, up on every node (eno1, mlx5_0/1): where NCCL should send. */
  ports: string[]
  /** The command line that ran rigfit on every node: each node's ranks run under its monitor. */
  launcher: string[]
}

/** What a format needs beyond the plan itself. */
export interface FormatContext {
  /** The allocation of a cluster profile (`--from cluster.json`); null for any other export. */
  cluster: ClusterShape | null
  /** Host names for multi-node launchers (DeepSpeed hostfile); empty when the user gave none. */
  hosts: string[]
  /** Kconfig: leave batch size and compile to the trainer's AUTO detection instead of pinning them. */
  portable: boolean
  /** Names the run's checkpoint directory: the plan's slug, with the phase for meta-configs. */
  runName: string
  /**
   * Phase B of a meta-config starts from phase A: its checkpoint directory (relative to where the run is
   * launched, like every output directory) and the optimizer steps phase A trained. Null outside phase B.
   */
  resume: { from: string; stepsBefore: number } | null
  /** Records a warning about what the target cannot express exactly. */
  warn: (id: string, message: string) => void
}

export interface Exporter {
  name: string
  description: string
  /** Why this plan cannot be expressed in the format (a CPU plan for DeepSpeed), or null when it can. */
  unsupportedReason: (plan: TrainingPlan) => string | null
  render: (plan: TrainingPlan, ctx: FormatContext) => ExportFile[]
  /** Problems in rendered files against the target's own field list and rules; empty when valid. */
  validate: (files: ExportFile[], plan: TrainingPlan) => string[]
}

export type ExportWarning = Advice
