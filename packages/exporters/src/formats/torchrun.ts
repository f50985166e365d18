import { processesPerNode, type TrainingPlan, worldSize } from '@rigfit/core'
import { engineOf, warnFsdpAsZero3, warnNvmePath } from '../engine.js'
import { methodFiles, methodSummary } from '../method.js'
import { commentLines, jsonDocument, provenance, resumeLines, SCRIPT_DIR_LINE, textFile } from '../render.js'
import { parseCommandFlags } from '../shell-flags.js'
import type { Exporter, ExportFile, FormatContext } from '../types.js'
import { modelSplitReason } from '../validate.js'
import { ncclLines, rendezvousHost } from './cluster-job.js'
import { DEFAULT_MASTER_PORT } from './deepspeed.js'
import { buildDeepSpeedConfig, DS_CONFIG_FILE, validateDeepSpeedConfig } from './deepspeed-config.js'
import { PLAN_FILE, planFile, validatePlanFile } from './rigfit.js'

/** Restarts torchrun grants a failed worker group on several nodes (one flaky node should not end the run). */
export const MAX_RESTARTS = 3

export const TORCHRUN_SCRIPT = 'launch_torchrun.sh'

/**
 * The torch releases whose torchrun takes the flags written here. torch 2.1 added the dashed spellings
 * (--nproc-per-node) beside the underscore ones; torch 1.13 and 2.0 know only the underscore ones, which every
 * release since still accepts, so the scripts use those.
 */
export const TORCHRUN_SUPPORTED = 'torch 1.13 to 2.x'

/** The environment variable through which torchrun and SLURM launches hand a ZeRO plan's DeepSpeed config to the script. */
export const DEEPSPEED_CONFIG_ENV = 'RIGFIT_DEEPSPEED_CONFIG'

/** How the nodes of a multi-node job find each other. */
export interface Rendezvous {
  endpoint: string
  id: string
}

/** torchrun's flags for a plan: --standalone on one node, c10d rendezvous and --max_restarts on several. */
export function torchrunArgs(plan: TrainingPlan, rendezvous: Rendezvous): string[] {
  const s = plan.settings
  // torchrun 1.13 on Python 3.11 cannot read its own default `--redirects 0` / `--tee 0` (the enum member it
  // looks up is no longer iterable there) and fails before starting a rank; naming stdout explicitly works on
  // every release, and the tee keeps each rank's stdout on the console for the monitor.
  const args = [`--nnodes=${s.nodes}`, `--nproc_per_node=${processesPerNode(s)}`, '--redirects=1', '--tee=1']
  if (s.nodes === 1) return ['--standalone', ...args]
  return [
    ...args,
    '--rdzv_backend=c10d',
    `--rdzv_endpoint=${rendezvous.endpoint}`,
    `--rdzv_id=${rendezvous.id}`,
    `--max_restarts=${MAX_RESTARTS}`,
  ]
}

/** The flags after `torchrun` in a script, up to the script arguments ("$@"). */
export function parseTorchrunFlags(script: string): Map<string, string> | null {
  return parseCommandFlags(script, 'torchrun')
}

/** torchrun's rules: --standalone only alone on one node; c10d rendezvous and restarts across nodes; the world size. */
export function torchrunProblems(path: string, script: string, plan: TrainingPlan): string[] {
  const flags = parseTorchrunFlags(script)
  if (!flags) return [`${path}: no torchrun invocation found`]
  const problems: string[] = []
  const nnodes = Number(flags.get('--nnodes'))
  const nproc = Number(flags.get('--nproc_per_node'))
  if (nnodes * nproc !== worldSize(plan.settings)) {
    problems.push(
      `${path}: --nnodes ${nnodes} x --nproc_per_node ${nproc} != world size ${worldSize(plan.settings)}`,
    )
  }
  if (nnodes === 1 && !flags.has('--standalone')) problems.push(`${path}: one node without --standalone`)
  if (nnodes > 1) {
    if (flags.has('--standalone')) problems.push(`${path}: --standalone on ${nnodes} nodes`)
    if (flags.get('--rdzv_backend') !== 'c10d')
      problems.push(`${path}: several nodes without c10d rendezvous`)
    if (!flags.get('--rdzv_endpoint')) problems.push(`${path}: several nodes without --rdzv_endpoint`)
    if (!flags.has('--max_restarts')) problems.push(`${path}: several nodes without --max_restarts`)
  }
  const dashed = [...flags.keys()].filter((f) => /^--\w+-/.test(f))
  if (dashed.length > 0) problems.push(`${path}: ${dashed.join(', ')} are unknown to torch before 2.1`)
  return problems
}

/** Lines that hand a ZeRO plan's DeepSpeed config to the script; none for other plans. */
export function deepspeedEnvLines(plan: TrainingPlan, configPath: string): string[] {
  if (engineOf(plan).kind !== 'deepspeed') return []
  return [
    `# DeepSpeed ZeRO: the script passes ${DS_CONFIG_FILE} to deepspeed.initialize(config=os.environ["${DEEPSPEED_CONFIG_ENV}"]).`,
    `export ${DEEPSPEED_CONFIG_ENV}="${configPath}"`,
  ]
}

/** The files beside a launch script: the DeepSpeed config of a ZeRO plan, the method's configs, the plan. */
export function launcherCompanions(plan: TrainingPlan, ctx: FormatContext): ExportFile[] {
  const engine = engineOf(plan)
  warnFsdpAsZero3(engine, ctx.warn)
  warnNvmePath(engine, ctx.warn)
  const files: ExportFile[] = []
  if (engine.kind === 'deepspeed')
    files.push(textFile(DS_CONFIG_FILE, jsonDocument(buildDeepSpeedConfig(plan, ctx))))
  return [...files, ...methodFiles(plan, engine, ctx.warn), planFile(plan)]
}

export function validateCompanions(files: ExportFile[], plan: TrainingPlan): string[] {
  const ds = engineOf(plan).kind === 'deepspeed' ? validateDeepSpeedConfig(files, plan) : []
  return [...ds, ...validatePlanFile(files, plan)]
}

/**
 * Where the nodes meet: MASTER_ADDR as the environment gives it, else the first of the cluster's (or --hosts')
 * nodes; with neither, the script stops and asks for it.
 */
function rendezvousLines(ctx: FormatContext): string[] {
  const host = rendezvousHost(ctx)
  return [
    host === null
      ? // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
        ': "${MASTER_ADDR:?set MASTER_ADDR to the address of the rendezvous node}"'
      : `MASTER_ADDR="\${MASTER_ADDR:-${host}}"`,
    `MASTER_PORT="\${MASTER_PORT:-${DEFAULT_MASTER_PORT}}"`,
  ]
}

function launchScript(plan: TrainingPlan, ctx: FormatContext): string {
  const s = plan.settings
  const multiNode = s.nodes > 1
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
  const args = torchrunArgs(plan, { endpoint: '"$MASTER_ADDR:$MASTER_PORT"', id: '"${RUN_ID:-rigfit}"' })
  const header = [
    provenance(plan),
    `Method: ${methodSummary(plan)}; sequence length ${s.seq}.`,
    multiNode
      ? ctx.cluster
        ? `Run the same command on each of the ${s.nodes} nodes (${ctx.cluster.nodes.join(', ')}) with the same RUN_ID; they meet at ${ctx.cluster.nodes[0]}.`
        : `Run the same command on each of the ${s.nodes} nodes with the same MASTER_ADDR (one node's address) and RUN_ID.`
      : 'Run on the training machine.',
    'Usage: ./launch_torchrun.sh train.py [script arguments]',
    `The training script reads micro-batch, accumulation, precision, sequence length and method from ${PLAN_FILE} (RIGFIT_PLAN_FILE).`,
    `torchrun flags in the spelling ${TORCHRUN_SUPPORTED} accepts.`,
  ]
  return [
    '#!/usr/bin/env bash',
    commentLines(header, '# '),
    'set -euo pipefail',
    SCRIPT_DIR_LINE,
    `export RIGFIT_PLAN_FILE="\${RIGFIT_PLAN_FILE:-$HERE/${PLAN_FILE}}"`,
    `export OMP_NUM_THREADS=${s.threads}`,
    ...deepspeedEnvLines(plan, `$HERE/${DS_CONFIG_FILE}`),
    ...resumeLines(ctx),
    ...(multiNode ? rendezvousLines(ctx) : []),
    ...ncclLines(plan, ctx.cluster),
    `exec torchrun \\\n  ${args.join(' \\\n  ')} \\\n  "$@"`,
    '',
  ].join('\n')
}

export const torchrunFormat: Exporter = {
  name: 'torchrun',
  description: `torchrun launch script (${TORCHRUN_SUPPORTED}): --standalone on one node, c10d rendezvous with restarts on several`,
  // An mps plan is one process: torchrun --standalone starts it like any single-GPU plan.
  unsupportedReason: (plan) => modelSplitReason(plan, 'torchrun'),
  render(plan, ctx) {
    return [textFile(TORCHRUN_SCRIPT, launchScript(plan, ctx), true), ...launcherCompanions(plan, ctx)]
  },
  validate(files: ExportFile[], plan) {
    const script = files.find((f) => f.path === TORCHRUN_SCRIPT)
    if (!script) return [`${TORCHRUN_SCRIPT}: missing from the export`]
    return [...torchrunProblems(TORCHRUN_SCRIPT, script.content, plan), ...validateCompanions(files, plan)]
  },
}
