/** The log of a run on one machine. */
export const RUN_LOG_FILE = 'monitor.jsonl'

/**
 * The Slurm node this monitor runs on when it is one of several nodes of one job (SLURMD_NODENAME in a job of
 * more than one node), so that every node records into the same run folder without overwriting the others;
 * null for a run on one machine.
 */
export function multiNodeName(env: NodeJS.ProcessEnv): string | null {
  const nodes = Number(env.SLURM_JOB_NUM_NODES ?? env.SLURM_NNODES ?? '1')
  const name = env.SLURMD_NODENAME?.trim()
  if (!env.SLURM_JOB_ID || !(nodes > 1) || !name) return null
  return name
}

/** The run log's file name: `monitor.jsonl`, or `monitor-<node>.jsonl` for one node of a multi-node job. */
export function runLogFileName(node: string | null): string {
  // A node name is a host name; anything else in it is replaced so the name stays one file in the folder.
  return node === null ? RUN_LOG_FILE : `monitor-${node.replace(/[^\w.-]/g, '_')}.jsonl`
}

/** The node of each per-node run log among a folder's file names (rotated copies `.1.jsonl` left out). */
export function nodeRunLogs(files: string[]): { node: string; file: string }[] {
  const present = new Set(files)
  return files
    .map((file) => ({ file, node: /^monitor-(.+)\.jsonl$/.exec(file)?.[1] }))
    .filter((entry): entry is { file: string; node: string } => entry.node !== undefined)
    .filter(
      (entry) => !(entry.node.endsWith('.1') && present.has(`monitor-${entry.node.slice(0, -2)}.jsonl`)),
    )
    .sort((a, b) => a.node.localeCompare(b.node))
}
