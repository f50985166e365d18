import { processesPerNode, type TrainingPlan } from '@rigfit/core'
import { engineOf, warnFsdpAsZero3, warnNvmePath } from '../engine.js'
import { methodFiles, methodSummary } from '../method.js'
import {
  commentLines,
  jsonDocument,
  provenance,
  resumeLines,
  SCRIPT_DIR_LINE,
  shellQuote,
  textFile,
} from '../render.js'
import type { Exporter, ExportFile, FormatContext } from '../types.js'
import { modelSplitReason } from '../validate.js'
import { buildDeepSpeedConfig, DS_CONFIG_FILE, validateDeepSpeedConfig } from './deepspeed-config.js'
import { PLAN_FILE, planFile, validatePlanFile } from './rigfit.js'

export {
  buildDeepSpeedConfig,
  DS_CONFIG_FILE,
  validateDeepSpeedConfig,
  zeroStage,
} from './deepspeed-config.js'

export const DEFAULT_MASTER_PORT = 29500
export const DEEPSPEED_SCRIPT = 'launch_deepspeed.sh'
/**
 * The environment file DeepSpeed's multi-node runner exports on every node (launcher/runner.py reads
 * DS_ENV_FILE, else ~/.deepspeed_env or ./.deepspeed_env): beside it the runner forwards only variables named
 * NCCL*, PYTHON*, UCX*, MV2*, MLFLOW* (and Nebula's), so a variable the launch script exports reaches the first
 * node's ranks alone.
 */
export const DEEPSPEED_ENV_FILE = '.deepspeed_env'

/** The variables every rank needs, as `.deepspeed_env` lines (KEY=VALUE; the runner splits at the first `=`). */
export function deepspeedEnvFileLines(plan: TrainingPlan, ctx: FormatContext): string[] {
  const lines = [`OMP_NUM_THREADS=${plan.settings.threads}`]
  if (ctx.resume) lines.push(`RIGFIT_RESUME_FROM=${ctx.resume.from}`)
  return lines
}

/** DeepSpeed hostfile lines: one per node with its GPU count. */
export function hostfileLines(plan: TrainingPlan, ctx: FormatContext): string[] {
  const slots = processesPerNode(plan.settings)
  const hosts =
    ctx.hosts.length > 0 ? ctx.hosts : Array.from({ length: plan.settings.nodes }, (_, i) => `node${i + 1}`)
  if (ctx.hosts.length === 0) {
    ctx.warn(
      'deepspeed-hostfile-names',
      `The hostfile names the nodes ${hosts.join(', ')}; replace them with your hosts' names, or export again with --hosts.`,
    )
  }
  return hosts.map((host) => `${host} slots=${slots}`)
}

function launchScript(plan: TrainingPlan, ctx: FormatContext, multiNode: boolean): string {
  const s = plan.settings
  const launcher = multiNode
    ? [
        '--hostfile "$HERE/hostfile"',
        `--num_nodes ${s.nodes}`,
        `--num_gpus ${processesPerNode(s)}`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
        '--master_addr "${MASTER_ADDR:?set MASTER_ADDR to the address of the first host in the hostfile}"',
        `--master_port "\${MASTER_PORT:-${DEFAULT_MASTER_PORT}}"`,
      ]
    : [`--num_gpus ${processesPerNode(s)}`]
  const header = [
    provenance(plan),
    `Method: ${methodSummary(plan)}; sequence length ${s.seq}.`,
    multiNode
      ? `Run on the first host of the hostfile; DeepSpeed reaches the other ${s.nodes - 1} over ssh (pdsh).`
      : 'Run on the training machine.',
    'Usage: ./launch_deepspeed.sh train.py [script arguments]',
    `The script receives --deepspeed --deepspeed_config ${DS_CONFIG_FILE} (deepspeed.add_config_arguments) and reads the sequence length and method from ${PLAN_FILE} (RIGFIT_PLAN_FILE).`,
  ]
  if (multiNode)
    header.push(
      `DeepSpeed forwards to the other nodes only NCCL*/PYTHON*/UCX*/MV2*/MLFLOW* variables and the lines of ${DEEPSPEED_ENV_FILE} (DS_ENV_FILE): the threads go there, and every rank finds ${PLAN_FILE} beside the --deepspeed_config path it is given (a folder all nodes share).`,
    )
  return [
    '#!/usr/bin/env bash',
    commentLines(header, '# '),
    'set -euo pipefail',
    SCRIPT_DIR_LINE,
    `export RIGFIT_PLAN_FILE="\${RIGFIT_PLAN_FILE:-$HERE/${PLAN_FILE}}"`,
    `export OMP_NUM_THREADS=${shellQuote(String(s.threads))}`,
    ...resumeLines(ctx),
    ...(multiNode ? [`export DS_ENV_FILE="$HERE/${DEEPSPEED_ENV_FILE}"`] : []),
    `exec deepspeed ${launcher.join(' \\\n  ')} \\\n  "$@" --deepspeed --deepspeed_config "$HERE/${DS_CONFIG_FILE}"`,
    '',
  ].join('\n')
}

export const deepspeedFormat: Exporter = {
  name: 'deepspeed',
  description: 'DeepSpeed config JSON (ZeRO stage, offload, precision, batch), launcher script and hostfile',
  unsupportedReason(plan) {
    if (plan.settings.device !== 'cuda' && plan.settings.device !== 'rocm') {
      return `DeepSpeed trains on CUDA or ROCm GPUs; this plan is for ${plan.settings.device}`
    }
    return modelSplitReason(plan, 'DeepSpeed')
  },
  render(plan, ctx) {
    const engine = engineOf(plan)
    if (engine.kind === 'fsdp') {
      ctx.warn(
        'deepspeed-fsdp-as-zero3',
        'The plan shards with FSDP; DeepSpeed expresses the same sharding as ZeRO stage 3.',
      )
    }
    warnFsdpAsZero3(engine, ctx.warn)
    warnNvmePath(engine, ctx.warn)
    const multiNode = plan.settings.nodes > 1
    const files: ExportFile[] = [textFile(DS_CONFIG_FILE, jsonDocument(buildDeepSpeedConfig(plan, ctx)))]
    if (multiNode) {
      files.push(textFile('hostfile', `${hostfileLines(plan, ctx).join('\n')}\n`))
      files.push(textFile(DEEPSPEED_ENV_FILE, `${deepspeedEnvFileLines(plan, ctx).join('\n')}\n`))
    }
    files.push(textFile(DEEPSPEED_SCRIPT, launchScript(plan, ctx, multiNode), true))
    files.push(...methodFiles(plan, engine, ctx.warn), planFile(plan))
    return files
  },
  validate(files, plan) {
    return [...validateDeepSpeedConfig(files, plan), ...validatePlanFile(files, plan)]
  },
}
