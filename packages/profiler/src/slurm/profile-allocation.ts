import {
  buildClusterProfile,
  type ClusterNode,
  type ClusterProfile,
  parseSlurmTopology,
  RIGFIT_VERSION,
  RigfitError,
} from '@rigfit/core'
import { runTool } from '../exec/run-tool.js'
import { findExecutable } from '../exec/which.js'
import { nodeAnswer } from './node-answer.js'
import {
  type Allocation,
  cancelSteps,
  currentAllocation,
  releaseAllocation,
  requestAllocation,
} from './slurm-allocation.js'

const TOPOLOGY_DEADLINE_MS = 30_000

export interface SlurmProfileOptions {
  /** The command line that runs this rigfit, run on every node with `profile --json` after it. */
  launcher: string[]
  /** How long one node may take to answer. */
  nodeTimeoutMs: number
  env: NodeJS.ProcessEnv
  /** Outside an allocation: the one rigfit asks Slurm for, and releases. Null: use the allocation it runs in. */
  request: { partition: string; nodes: number; waitMs: number } | null
  createdAt?: string
  /** Told as each node answers (progress). */
  onNode?: (node: Omit<ClusterNode, 'switch'>) => void
}

async function requireSlurm(env: NodeJS.ProcessEnv, tools: string[]): Promise<void> {
  for (const tool of tools) {
    if ((await findExecutable(tool, env)) === null) {
      throw new RigfitError(
        'hardware',
        'E_SLURM_MISSING',
        `${tool} is not on PATH: rigfit profile --slurm runs through Slurm.`,
        {
          suggestion:
            'Run it on a Slurm login node or inside an allocation (salloc/sbatch); without Slurm, profile each node with `rigfit profile --out node.json` and plan with `rigfit plan --cluster node-a.json node-b.json`.',
        },
      )
    }
  }
}

/** One node's `rigfit profile --json`, in a step of its own named `stepName`, within the deadline. */
async function profileNode(
  allocation: Allocation,
  node: string,
  stepName: string,
  options: SlurmProfileOptions,
): Promise<Omit<ClusterNode, 'switch'>> {
  const args = [
    `--jobid=${allocation.jobId}`,
    '--nodes=1',
    '--ntasks=1',
    '--ntasks-per-node=1',
    `--nodelist=${node}`,
    `--job-name=${stepName}`,
    '--quiet',
    ...options.launcher,
    'profile',
    '--json',
  ]
  const result = await runTool('srun', args, { timeoutMs: options.nodeTimeoutMs, env: options.env })
  const answer = nodeAnswer(node, result, options.launcher, options.nodeTimeoutMs)
  options.onNode?.(answer)
  return answer
}

/**
 * Profiles every node of a Slurm allocation: `srun --ntasks-per-node=1 <rigfit> profile --json` on each node
 * at once, each within its deadline, then one cluster profile of them all. Outside an allocation it asks for one
 * (salloc) and always releases it; a node step killed at its deadline is cancelled, so no job or step is left.
 * Throws when there is no Slurm, no node, or no node answered.
 */
export async function profileSlurmAllocation(options: SlurmProfileOptions): Promise<ClusterProfile> {
  const env = options.env
  const inside = currentAllocation(env)
  if (inside && options.request) {
    throw new RigfitError(
      'usage',
      'E_SLURM_INSIDE',
      `This runs inside Slurm job ${inside.jobId} already: --partition and --nodes ask for a new allocation.`,
      {
        suggestion: 'Drop --partition and --nodes to profile this allocation, or run from outside it.',
      },
    )
  }
  if (!inside && !options.request) {
    throw new RigfitError(
      'usage',
      'E_SLURM_NO_ALLOCATION',
      'Not inside a Slurm allocation (SLURM_JOB_ID is not set), and no --partition and --nodes to ask for one.',
      {
        suggestion:
          'Run it inside `salloc -N 2` or an sbatch script, or pass --partition P --nodes N for rigfit to allocate (and release) the nodes.',
      },
    )
  }
  await requireSlurm(env, inside ? ['srun'] : ['salloc', 'srun', 'scancel', 'scontrol'])
  const request = options.request
  const allocation =
    inside ??
    (await requestAllocation(request?.partition ?? '', request?.nodes ?? 0, request?.waitMs ?? 0, env))
  const stepName = `rigfit-profile-${process.pid}`
  try {
    if (allocation.nodes.length === 0) {
      throw new RigfitError(
        'hardware',
        'E_SLURM_NO_NODES',
        `Slurm job ${allocation.jobId} holds no nodes (its node list is empty).`,
        {
          suggestion: 'Allocate at least one node: `salloc -N 2`, or --nodes 2 with --partition.',
        },
      )
    }
    const [answers, topology] = await Promise.all([
      Promise.all(allocation.nodes.map((node) => profileNode(allocation, node, stepName, options))),
      runTool('scontrol', ['show', 'topology'], { timeoutMs: TOPOLOGY_DEADLINE_MS, env }),
    ])
    if (answers.some((answer) => answer.status === 'timeout'))
      await cancelSteps(allocation.jobId, stepName, env)
    if (answers.every((answer) => answer.status !== 'ok')) {
      throw new RigfitError(
        'child',
        'E_SLURM_NO_PROFILE',
        `No node of Slurm job ${allocation.jobId} returned a profile: ${answers.map((a) => a.error).join('; ')}`,
        {
          suggestion: `Check that \`${options.launcher.join(' ')} profile --json\` runs on the nodes (a shared install path), or give slow nodes a longer --node-timeout.`,
          details: answers,
        },
      )
    }
    const leafSwitch = parseSlurmTopology(topology.stdout)
    return buildClusterProfile({
      createdAt: options.createdAt ?? new Date().toISOString(),
      rigfitVersion: RIGFIT_VERSION,
      scheduler: {
        kind: 'slurm',
        jobId: allocation.jobId,
        partition: allocation.partition,
        allocation: inside ? 'existing' : 'rigfit',
      },
      launcher: options.launcher,
      nodes: answers,
      leafSwitch,
      notes:
        leafSwitch.size === 0
          ? ['Slurm reports no network topology (no topology/tree plugin): switches unknown.']
          : [],
    })
  } finally {
    if (!inside) await releaseAllocation(allocation.jobId, env)
  }
}
