import type { TrainingPlan } from '@rigfit/core'
import type { ClusterShape, FormatContext } from '../types.js'

/** Single-quoted for bash: the launcher's paths go into the script as they are. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

/** `#SBATCH` lines that pin the job to the profiled allocation's partition, without the nodes that failed. */
export function clusterDirectives(cluster: ClusterShape | null): string[] {
  if (!cluster) return []
  return [
    ...(cluster.partition ? [`--partition=${cluster.partition}`] : []),
    ...(cluster.excluded.length > 0 ? [`--exclude=${cluster.excluded.join(',')}`] : []),
  ]
}

/** CPUs one task asks for, never more than its share of the profiled node's CPUs: Slurm would never start it. */
export function clusterCpusPerTask(cpus: number, tasksPerNode: number, cluster: ClusterShape | null): number {
  if (!cluster) return cpus
  return Math.max(1, Math.min(cpus, Math.floor(cluster.cpusPerNode / Math.max(1, tasksPerNode))))
}

/**
 * NCCL's settings for the network measured between the nodes: InfiniBand and RoCE use the RDMA ports every node
 * has up (RoCE v2 on GID index 3, the usual one); Ethernet turns RDMA off and names the interfaces; unknown
 * leaves NCCL to choose. Each is a default the environment can override. A CPU plan (gloo) has none.
 */
export function ncclLines(plan: TrainingPlan, cluster: ClusterShape | null): string[] {
  if (!cluster || plan.settings.backend !== 'nccl' || plan.settings.nodes < 2) return []
  const devices = [...new Set(cluster.ports.map((port) => port.split('/')[0] as string))].join(',')
  const set = (name: string, value: string) => `export ${name}="\${${name}:-${value}}"`
  switch (cluster.network) {
    case 'infiniband':
    case 'roce':
      return [
        `# NCCL over ${cluster.network === 'roce' ? 'RoCE (RDMA over Ethernet)' : 'InfiniBand'}, as profiled on every node.`,
        set('NCCL_IB_DISABLE', '0'),
        ...(devices ? [set('NCCL_IB_HCA', devices)] : []),
        ...(cluster.network === 'roce' ? [set('NCCL_IB_GID_INDEX', '3')] : []),
      ]
    case 'ethernet':
      return [
        '# NCCL over TCP sockets: the nodes share no RDMA network.',
        set('NCCL_IB_DISABLE', '1'),
        ...(devices ? [set('NCCL_SOCKET_IFNAME', devices)] : []),
      ]
    default:
      return ['# The network between the nodes is unknown: NCCL picks its transport itself.']
  }
}

/**
 * Each node's training under `rigfit monitor`, as the profile ran it there: the lines that name the command
 * (RIGFIT_COMMAND overrides it) and the run folder all nodes record into, one monitor log per node. The monitor
 * relaunches nothing: one node relaunched alone would leave the others' rendezvous; torchrun restarts the group.
 */
export function monitorWrapper(cluster: ClusterShape | null): { lines: string[]; prefix: string } {
  if (!cluster) return { lines: [], prefix: '' }
  return {
    lines: [
      `# Each node trains under rigfit monitor (as profiled on the nodes; RIGFIT_COMMAND overrides it), all into one run folder.`,
      `RIGFIT=(${cluster.launcher.map(shellQuote).join(' ')})`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not templates
      'if [ -n "${RIGFIT_COMMAND:-}" ]; then read -r -a RIGFIT <<< "$RIGFIT_COMMAND"; fi',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not templates
      'RIGFIT_RUN_DIR="${RIGFIT_RUN_DIR:-$SLURM_SUBMIT_DIR/rigfit-runs/$SLURM_JOB_ID}"',
    ],
    prefix:
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell array expansion, not a template
      '"${RIGFIT[@]}" monitor --plan "$RIGFIT_PLAN_FILE" --log-dir "$RIGFIT_RUN_DIR" --max-restarts=0 --quiet -- ',
  }
}

/** The rendezvous host of a cluster or `--hosts` export: the first node, which MASTER_ADDR may still override. */
export function rendezvousHost(ctx: FormatContext): string | null {
  return ctx.cluster?.nodes[0] ?? ctx.hosts[0] ?? null
}
