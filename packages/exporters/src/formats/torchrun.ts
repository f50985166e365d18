import type { TrainingPlan } from '@rigfit/core'
import { processesPerNode, worldSize } from '../plan-facts.js'
import { commentLines, provenance, SCRIPT_DIR_LINE, textFile } from '../render.js'
import type { Exporter, ExportFile } from '../types.js'
import { modelSplitReason } from '../validate.js'
import { DEFAULT_MASTER_PORT } from './deepspeed.js'
import { PLAN_FILE, planFile, validatePlanFile } from './rigfit.js'

/** Restarts torchrun grants a failed worker group on several nodes (one flaky node should not end the run). */
export const MAX_RESTARTS = 3

export const TORCHRUN_SCRIPT = 'launch_torchrun.sh'

/** How the nodes of a multi-node job find each other. */
export interface Rendezvous {
  endpoint: string
  id: string
}

/** torchrun's flags for a plan: --standalone on one node, c10d rendezvous and --max-restarts on several. */
export function torchrunArgs(plan: TrainingPlan, rendezvous: Rendezvous): string[] {
  const s = plan.settings
  const args = [`--nnodes=${s.nodes}`, `--nproc-per-node=${processesPerNode(s)}`]
  if (s.nodes === 1) return ['--standalone', ...args]
  return [
    ...args,
    '--rdzv-backend=c10d',
    `--rdzv-endpoint=${rendezvous.endpoint}`,
    `--rdzv-id=${rendezvous.id}`,
    `--max-restarts=${MAX_RESTARTS}`,
  ]
}

/** The flags after `torchrun` in a script, up to the script arguments ("$@"). */
export function parseTorchrunFlags(script: string): Map<string, string> | null {
  const joined = script.replaceAll('\\\n', ' ')
  const match = /\btorchrun\s+((?:--[\w-]+(?:=\S+)?\s+)+)/.exec(joined)
  if (!match?.[1]) return null
  const flags = new Map<string, string>()
  for (const token of match[1].trim().split(/\s+/)) {
    const [name, ...value] = token.split('=')
    if (name) flags.set(name, value.join('='))
  }
  return flags
}

/** torchrun's rules: --standalone only alone on one node; c10d rendezvous and restarts across nodes; the world size. */
export function torchrunProblems(path: string, script: string, plan: TrainingPlan): string[] {
  const flags = parseTorchrunFlags(script)
  if (!flags) return [`${path}: no torchrun invocation found`]
  const problems: string[] = []
  const nnodes = Number(flags.get('--nnodes'))
  const nproc = Number(flags.get('--nproc-per-node'))
  if (nnodes * nproc !== worldSize(plan.settings)) {
    problems.push(
      `${path}: --nnodes ${nnodes} x --nproc-per-node ${nproc} != world size ${worldSize(plan.settings)}`,
    )
  }
  if (nnodes === 1 && !flags.has('--standalone')) problems.push(`${path}: one node without --standalone`)
  if (nnodes > 1) {
    if (flags.has('--standalone')) problems.push(`${path}: --standalone on ${nnodes} nodes`)
    if (flags.get('--rdzv-backend') !== 'c10d')
      problems.push(`${path}: several nodes without c10d rendezvous`)
    if (!flags.get('--rdzv-endpoint')) problems.push(`${path}: several nodes without --rdzv-endpoint`)
    if (!flags.has('--max-restarts')) problems.push(`${path}: several nodes without --max-restarts`)
  }
  return problems
}

function launchScript(plan: TrainingPlan): string {
  const s = plan.settings
  const multiNode = s.nodes > 1
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
  const args = torchrunArgs(plan, { endpoint: '"$MASTER_ADDR:$MASTER_PORT"', id: '"${RUN_ID:-rigfit}"' })
  const header = [
    provenance(plan),
    multiNode
      ? `Run the same command on each of the ${s.nodes} nodes with the same MASTER_ADDR (one node's address) and RUN_ID.`
      : 'Run on the training machine.',
    'Usage: ./launch_torchrun.sh train.py [script arguments]',
    `The training script reads micro-batch, accumulation and precision from ${PLAN_FILE} (RIGFIT_PLAN_FILE).`,
  ]
  return [
    '#!/usr/bin/env bash',
    commentLines(header, '# '),
    'set -euo pipefail',
    SCRIPT_DIR_LINE,
    `export RIGFIT_PLAN_FILE="\${RIGFIT_PLAN_FILE:-$HERE/${PLAN_FILE}}"`,
    `export OMP_NUM_THREADS=${s.threads}`,
    ...(multiNode
      ? [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
          ': "${MASTER_ADDR:?set MASTER_ADDR to the address of the rendezvous node}"',
          `MASTER_PORT="\${MASTER_PORT:-${DEFAULT_MASTER_PORT}}"`,
        ]
      : []),
    `exec torchrun \\\n  ${args.join(' \\\n  ')} \\\n  "$@"`,
    '',
  ].join('\n')
}

export const torchrunFormat: Exporter = {
  name: 'torchrun',
  description: 'torchrun launch script: --standalone on one node, c10d rendezvous with restarts on several',
  unsupportedReason: (plan) =>
    plan.settings.device === 'mps'
      ? 'torchrun launches distributed workers; an mps plan runs as one process'
      : modelSplitReason(plan, 'torchrun'),
  render(plan) {
    return [textFile(TORCHRUN_SCRIPT, launchScript(plan), true), planFile(plan)]
  },
  validate(files: ExportFile[], plan) {
    const script = files.find((f) => f.path === TORCHRUN_SCRIPT)
    if (!script) return [`${TORCHRUN_SCRIPT}: missing from the export`]
    return [...torchrunProblems(TORCHRUN_SCRIPT, script.content, plan), ...validatePlanFile(files, plan)]
  },
}
