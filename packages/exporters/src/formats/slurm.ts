import { processesPerNode, type TrainingPlan, traceFor } from '@rigfit/core'
import { methodSummary } from '../method.js'
import { planSlug } from '../plan-facts.js'
import { commentLines, provenance, resumeLines, textFile, wallClockLimit } from '../render.js'
import { parseCommandFlags } from '../shell-flags.js'
import type { Exporter, FormatContext } from '../types.js'
import { modelSplitReason } from '../validate.js'
import { clusterCpusPerTask, clusterDirectives, monitorWrapper, ncclLines } from './cluster-job.js'
import { DS_CONFIG_FILE } from './deepspeed-config.js'
import { PLAN_FILE } from './rigfit.js'
import {
  deepspeedEnvLines,
  launcherCompanions,
  TORCHRUN_SUPPORTED,
  torchrunArgs,
  torchrunProblems,
  validateCompanions,
} from './torchrun.js'

export const SLURM_TORCHRUN_FILE = 'train_torchrun.sbatch'
/**
 * A multi-node job's rendezvous port, from its job id: 20000-29999, below Linux's ephemeral ports (32768 up), so
 * jobs that share a first node do not all listen on torchrun's 29500. `MASTER_PORT` in the environment wins.
 */
export const SLURM_PORT_BASE = 20000
export const SLURM_PORT_SPAN = 10000
export const SLURM_LIGHTNING_FILE = 'train_lightning.sbatch'

/** `#SBATCH --name=value` directives of a script, in order. */
export function parseSbatchDirectives(script: string): Map<string, string> {
  const directives = new Map<string, string>()
  for (const line of script.split('\n')) {
    const match = /^#SBATCH\s+(--[\w-]+)(?:=(.*))?$/.exec(line.trim())
    if (match?.[1]) directives.set(match[1], match[2] ?? '')
  }
  return directives
}

function directives(
  plan: TrainingPlan,
  tasksPerNode: number,
  cpusPerTask: number,
  extra: string[],
): string[] {
  const s = plan.settings
  const lines = [
    `--job-name=rigfit-${planSlug(plan)}`,
    `--nodes=${s.nodes}`,
    `--ntasks-per-node=${tasksPerNode}`,
  ]
  if (s.gpus > 0) lines.push(`--gpus-per-node=${s.gpus}`)
  lines.push(
    `--cpus-per-task=${cpusPerTask}`,
    `--time=${wallClockLimit(plan)}`,
    ...extra,
    '--output=%x-%j.out',
  )
  return lines.map((d) => `#SBATCH ${d}`)
}

/** The variables the batch script exports for every rank: the plan, the threads and the launcher's configs. */
function environmentLines(plan: TrainingPlan, ctx: FormatContext): string[] {
  return [
    `export RIGFIT_PLAN_FILE="\${RIGFIT_PLAN_FILE:-$SLURM_SUBMIT_DIR/${PLAN_FILE}}"`,
    `export OMP_NUM_THREADS=${plan.settings.threads}`,
    ...deepspeedEnvLines(plan, `$SLURM_SUBMIT_DIR/${DS_CONFIG_FILE}`),
    ...resumeLines(ctx),
  ]
}

/** The names an `export NAME=...` line sets. */
export function exportedNames(lines: string[]): string[] {
  return lines.flatMap((line) => /^export (\w+)=/.exec(line)?.[1] ?? [])
}

/**
 * srun's `--export`: every variable the script exported, named, beside the rest of the environment (ALL). srun
 * passes the batch environment to the tasks by default, but not when the job was submitted with --export=NONE or
 * SLURM_EXPORT_ENV says otherwise; naming them carries the plan to every task on every node whatever the site's
 * default.
 */
function srunExport(plan: TrainingPlan, ctx: FormatContext): string {
  return `--export=ALL,${exportedNames(environmentLines(plan, ctx)).join(',')}`
}

function preamble(plan: TrainingPlan, ctx: FormatContext, lines: string[]): string[] {
  return [
    commentLines([...lines, `Method: ${methodSummary(plan)}; sequence length ${plan.settings.seq}.`], '# '),
    'set -euo pipefail',
    ...environmentLines(plan, ctx),
  ]
}

/**
 * The CPUs a node can give its tasks: the usable cores the planner divided among the node's ranks (the threads
 * decision's facts), or null for a plan that does not record them.
 */
export function nodeCpus(plan: TrainingPlan): number | null {
  const facts = traceFor(plan.trace, 'threads').at(-1)?.facts as { usableCores?: unknown } | undefined
  const cores = facts?.usableCores
  return typeof cores === 'number' && Number.isInteger(cores) && cores > 0 ? cores : null
}

/**
 * `--cpus-per-task` for a node running `tasks` tasks of `ranksPerTask` ranks each: each rank's share, never
 * more than the node has (Slurm refuses a job asking a node for more CPUs than it has). A GPU rank keeps a loader
 * worker even when its share is one core, so on a node with fewer CPUs than that the ranks share them.
 */
export function cpusPerTask(plan: TrainingPlan, tasks: number, ranksPerTask: number): number {
  const wanted = cpusPerRank(plan) * ranksPerTask
  const cpus = nodeCpus(plan)
  return cpus === null ? wanted : Math.max(1, Math.min(wanted, Math.floor(cpus / tasks)))
}

/**
 * CPUs one training process holds: its share of the node, as the plan divides it. The plan gives each rank at
 * most its share of the physical cores as intra-op threads and keeps one core of its share for the training loop
 * beside the DataLoader workers, so the share is the larger of the two; the ranks' shares never exceed the node.
 */
export function cpusPerRank(plan: TrainingPlan): number {
  return Math.max(plan.settings.threads, plan.settings.dataloader.workers + 1)
}

/**
 * One task per node; each runs torchrun, which starts one worker per GPU, so the task holds every rank's CPUs.
 * srun is given --cpus-per-task itself: since Slurm 22.05 it no longer inherits the value from sbatch.
 */
function torchrunScript(plan: TrainingPlan, ctx: FormatContext): string {
  const s = plan.settings
  const cpus = clusterCpusPerTask(cpusPerTask(plan, 1, processesPerNode(s)), 1, ctx.cluster)
  const args = torchrunArgs(plan, { endpoint: '"$MASTER_ADDR:$MASTER_PORT"', id: '"$SLURM_JOB_ID"' })
  const monitor = monitorWrapper(ctx.cluster)
  // One node rendezvouses locally (--standalone): the rendezvous address is only needed across nodes.
  const rendezvous =
    s.nodes > 1
      ? [
          'MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"',
          // A port of this job's own: two jobs that share a first node would both listen on one fixed port.
          `MASTER_PORT="\${MASTER_PORT:-$((${SLURM_PORT_BASE} + SLURM_JOB_ID % ${SLURM_PORT_SPAN}))}"`,
        ]
      : []
  return [
    '#!/bin/bash',
    ...directives(plan, 1, cpus, clusterDirectives(ctx.cluster)),
    ...preamble(plan, ctx, [
      provenance(plan),
      'Submit: sbatch train_torchrun.sbatch train.py [script arguments]',
      `One task per node runs torchrun (${TORCHRUN_SUPPORTED}), which starts ${processesPerNode(s)} worker(s) on it.`,
    ]),
    ...rendezvous,
    ...ncclLines(plan, ctx.cluster),
    ...monitor.lines,
    `srun --cpus-per-task=${cpus} ${srunExport(plan, ctx)} ${monitor.prefix}torchrun \\\n  ${args.join(' \\\n  ')} \\\n  "$@"`,
    '',
  ].join('\n')
}

/** Lightning's SLURM mode: one task per GPU; Lightning reads the ranks from SLURM and requeues on SIGUSR1. */
function lightningScript(plan: TrainingPlan, ctx: FormatContext): string {
  const s = plan.settings
  const cpus = clusterCpusPerTask(cpusPerTask(plan, processesPerNode(s), 1), processesPerNode(s), ctx.cluster)
  return [
    '#!/bin/bash',
    ...directives(plan, processesPerNode(s), cpus, [
      '--signal=SIGUSR1@90',
      ...clusterDirectives(ctx.cluster),
    ]),
    ...preamble(plan, ctx, [
      provenance(plan),
      'Submit: sbatch train_lightning.sbatch train.py [script arguments]',
      `Lightning's Trainer must use devices=${processesPerNode(s)} and num_nodes=${s.nodes} (the lightning export writes them).`,
    ]),
    ...ncclLines(plan, ctx.cluster),
    `srun --cpus-per-task=${cpus} ${srunExport(plan, ctx)} python "$@"`,
    '',
  ].join('\n')
}

/** The options of the `srun` line of a script. */
export function parseSrunFlags(script: string): Map<string, string> | null {
  return parseCommandFlags(script, 'srun')
}

export const slurmFormat: Exporter = {
  name: 'slurm',
  description:
    'SLURM sbatch scripts: one task per node running torchrun, and a Lightning variant with one task per GPU',
  unsupportedReason: (plan) =>
    plan.settings.device === 'mps'
      ? 'SLURM clusters do not schedule Apple mps devices'
      : modelSplitReason(plan, 'SLURM'),
  render(plan, ctx) {
    return [
      textFile(SLURM_TORCHRUN_FILE, torchrunScript(plan, ctx), true),
      textFile(SLURM_LIGHTNING_FILE, lightningScript(plan, ctx), true),
      ...launcherCompanions(plan, ctx),
    ]
  },
  validate(files, plan) {
    const s = plan.settings
    const problems: string[] = []
    const expectedTasks: Record<string, number> = {
      [SLURM_TORCHRUN_FILE]: 1,
      [SLURM_LIGHTNING_FILE]: processesPerNode(s),
    }
    for (const [path, tasks] of Object.entries(expectedTasks)) {
      const file = files.find((f) => f.path === path)
      if (!file) {
        problems.push(`${path}: missing from the export`)
        continue
      }
      const d = parseSbatchDirectives(file.content)
      if (d.get('--nodes') !== String(s.nodes))
        problems.push(`${path}: --nodes ${d.get('--nodes')} != ${s.nodes}`)
      if (d.get('--ntasks-per-node') !== String(tasks))
        problems.push(`${path}: --ntasks-per-node ${d.get('--ntasks-per-node')} != ${tasks}`)
      if (s.gpus > 0 && d.get('--gpus-per-node') !== String(s.gpus))
        problems.push(`${path}: --gpus-per-node != ${s.gpus}`)
      if (!/^(\d+-)?\d{2}:\d{2}:\d{2}$/.test(d.get('--time') ?? ''))
        problems.push(`${path}: --time is not [D-]HH:MM:SS`)
      const srun = parseSrunFlags(file.content)
      if (srun?.get('--cpus-per-task') !== d.get('--cpus-per-task'))
        problems.push(`${path}: srun --cpus-per-task differs from #SBATCH --cpus-per-task`)
      if (s.nodes === 1 && /MASTER_(ADDR|PORT)=/.test(file.content))
        problems.push(`${path}: one node needs no rendezvous address`)
    }
    const torchrun = files.find((f) => f.path === SLURM_TORCHRUN_FILE)
    if (torchrun) problems.push(...torchrunProblems(SLURM_TORCHRUN_FILE, torchrun.content, plan))
    return [...problems, ...validateCompanions(files, plan)]
  },
}
