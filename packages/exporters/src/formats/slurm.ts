import type { TrainingPlan } from '@rigfit/core'
import { planSlug, processesPerNode } from '../plan-facts.js'
import { commentLines, provenance, textFile, wallClockLimit } from '../render.js'
import type { Exporter } from '../types.js'
import { modelSplitReason } from '../validate.js'
import { DEFAULT_MASTER_PORT } from './deepspeed.js'
import { PLAN_FILE, planFile, validatePlanFile } from './rigfit.js'
import { torchrunArgs, torchrunProblems } from './torchrun.js'

export const SLURM_TORCHRUN_FILE = 'train_torchrun.sbatch'
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

function preamble(plan: TrainingPlan, lines: string[]): string[] {
  return [
    commentLines(lines, '# '),
    'set -euo pipefail',
    `export RIGFIT_PLAN_FILE="\${RIGFIT_PLAN_FILE:-$SLURM_SUBMIT_DIR/${PLAN_FILE}}"`,
    `export OMP_NUM_THREADS=${plan.settings.threads}`,
  ]
}

/** One task per node; each runs torchrun, which starts one worker per GPU. */
function torchrunScript(plan: TrainingPlan): string {
  const s = plan.settings
  const perProcess = s.threads + s.dataloader.workers
  const args = torchrunArgs(plan, { endpoint: '"$MASTER_ADDR:$MASTER_PORT"', id: '"$SLURM_JOB_ID"' })
  return [
    '#!/bin/bash',
    ...directives(plan, 1, perProcess * processesPerNode(s), []),
    ...preamble(plan, [
      provenance(plan),
      'Submit: sbatch train_torchrun.sbatch train.py [script arguments]',
      `One task per node runs torchrun, which starts ${processesPerNode(s)} worker(s) on it.`,
    ]),
    'MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"',
    `MASTER_PORT=${DEFAULT_MASTER_PORT}`,
    `srun torchrun \\\n  ${args.join(' \\\n  ')} \\\n  "$@"`,
    '',
  ].join('\n')
}

/** Lightning's SLURM mode: one task per GPU; Lightning reads the ranks from SLURM and requeues on SIGUSR1. */
function lightningScript(plan: TrainingPlan): string {
  const s = plan.settings
  return [
    '#!/bin/bash',
    ...directives(plan, processesPerNode(s), s.threads + s.dataloader.workers, ['--signal=SIGUSR1@90']),
    ...preamble(plan, [
      provenance(plan),
      'Submit: sbatch train_lightning.sbatch train.py [script arguments]',
      `Lightning's Trainer must use devices=${processesPerNode(s)} and num_nodes=${s.nodes} (the lightning export writes them).`,
    ]),
    'srun python "$@"',
    '',
  ].join('\n')
}

export const slurmFormat: Exporter = {
  name: 'slurm',
  description:
    'SLURM sbatch scripts: one task per node running torchrun, and a Lightning variant with one task per GPU',
  unsupportedReason: (plan) =>
    plan.settings.device === 'mps'
      ? 'SLURM clusters do not schedule Apple mps devices'
      : modelSplitReason(plan, 'SLURM'),
  render(plan) {
    return [
      textFile(SLURM_TORCHRUN_FILE, torchrunScript(plan), true),
      textFile(SLURM_LIGHTNING_FILE, lightningScript(plan), true),
      planFile(plan),
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
    }
    const torchrun = files.find((f) => f.path === SLURM_TORCHRUN_FILE)
    if (torchrun) problems.push(...torchrunProblems(SLURM_TORCHRUN_FILE, torchrun.content, plan))
    return [...problems, ...validatePlanFile(files, plan)]
  },
}
