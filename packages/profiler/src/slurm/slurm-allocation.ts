import { userInfo } from 'node:os'
import { expandHostlist, RigfitError } from '@rigfit/core'
import { runTool } from '../exec/run-tool.js'

/** Slurm's client commands answer in seconds; longer means the controller is unreachable. */
const CONTROL_DEADLINE_MS = 30_000

export interface Allocation {
  jobId: string
  nodes: string[]
  partition: string | null
}

/** The id salloc printed ("Pending job allocation 42", "Granted job allocation 42"), or null. */
export function allocationId(text: string): string | null {
  return /job allocation (\d+)/.exec(text)?.[1] ?? null
}

/** `NodeList=` and `Partition=` of `scontrol show job ID`. */
export function parseShownJob(text: string): { nodes: string[]; partition: string | null } {
  const nodeList = /(?:^|\s)NodeList=(\S+)/.exec(text)?.[1]
  return {
    nodes: nodeList === undefined || nodeList === '(null)' ? [] : expandHostlist(nodeList),
    partition: /(?:^|\s)Partition=(\S+)/.exec(text)?.[1] ?? null,
  }
}

/** The allocation this process runs inside (salloc, sbatch), from the environment Slurm sets; null outside. */
export function currentAllocation(env: NodeJS.ProcessEnv): Allocation | null {
  const jobId = env.SLURM_JOB_ID ?? env.SLURM_JOBID
  if (!jobId) return null
  const list = env.SLURM_JOB_NODELIST ?? env.SLURM_NODELIST ?? ''
  let nodes: string[]
  try {
    nodes = expandHostlist(list)
  } catch (error) {
    throw new RigfitError(
      'input',
      'E_SLURM_NODELIST',
      `SLURM_JOB_NODELIST "${list}" cannot be read: ${(error as Error).message}`,
      {
        suggestion:
          'Run `rigfit profile --slurm` from inside the allocation as Slurm started it (salloc or sbatch).',
      },
    )
  }
  return { jobId, nodes, partition: env.SLURM_JOB_PARTITION ?? null }
}

/**
 * Asks Slurm for `nodes` nodes of `partition` (salloc --no-shell) and waits at most `waitMs` for them. The job
 * is named so that it can be found; whatever happens, a job that was queued is cancelled before this throws.
 */
export async function requestAllocation(
  partition: string,
  nodes: number,
  waitMs: number,
  env: NodeJS.ProcessEnv,
): Promise<Allocation> {
  const name = `rigfit-profile-${process.pid}`
  const salloc = await runTool(
    'salloc',
    [
      '--no-shell',
      `--partition=${partition}`,
      `--nodes=${nodes}`,
      '--ntasks-per-node=1',
      `--job-name=${name}`,
      `--immediate=${Math.max(1, Math.round(waitMs / 1000))}`,
    ],
    { timeoutMs: waitMs + CONTROL_DEADLINE_MS, env },
  )
  const jobId = allocationId(`${salloc.stderr}\n${salloc.stdout}`)
  if (!salloc.ok || jobId === null || !/Granted job allocation/.test(`${salloc.stderr}${salloc.stdout}`)) {
    await releaseAllocation(jobId, env, name)
    throw new RigfitError(
      'child',
      'E_SLURM_ALLOC',
      `salloc --partition=${partition} --nodes=${nodes} gave no allocation: ${salloc.error ?? (salloc.stderr.trim() || 'no job id')}`,
      {
        suggestion: `Check the partition and node count with \`sinfo -p ${partition}\`; a busy cluster may need a longer --alloc-timeout.`,
      },
    )
  }
  const shown = await runTool('scontrol', ['show', 'job', jobId], { timeoutMs: CONTROL_DEADLINE_MS, env })
  const job = parseShownJob(shown.stdout)
  return { jobId, nodes: job.nodes, partition: job.partition ?? partition }
}

/**
 * Cancels the job (or, when salloc printed no id, the jobs of this name) and waits for scancel to answer; a
 * job already gone is fine.
 */
export async function releaseAllocation(
  jobId: string | null,
  env: NodeJS.ProcessEnv,
  name?: string,
): Promise<void> {
  const args =
    jobId !== null ? [jobId] : name !== undefined ? [`--name=${name}`, `--user=${userInfo().username}`] : null
  if (args === null) return
  await runTool('scancel', args, { timeoutMs: CONTROL_DEADLINE_MS, env })
}

/** Cancels the steps of `jobId` named `stepName`: profile steps whose srun was killed at its deadline. */
export async function cancelSteps(jobId: string, stepName: string, env: NodeJS.ProcessEnv): Promise<void> {
  const steps = await runTool('squeue', ['--steps', `--jobs=${jobId}`, '--noheader', '--format=%i %j'], {
    timeoutMs: CONTROL_DEADLINE_MS,
    env,
  })
  const ids = steps.stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([id, name]) => id !== undefined && id !== '' && name === stepName)
    .map(([id]) => id as string)
  if (ids.length > 0) await runTool('scancel', ids, { timeoutMs: CONTROL_DEADLINE_MS, env })
}
