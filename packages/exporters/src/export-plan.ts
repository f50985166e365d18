import {
  type Advice,
  assertPlanConsistent,
  type CacheDecision,
  decideStreaming,
  deriveMetaPlans,
  exporterAdvice,
  type IoFacts,
  NO_IO_FACTS,
  type PhaseSummary,
  planForNodes,
  RigfitError,
  type StreamingDecision,
  sizeCache,
  type TrainingPlan,
} from '@rigfit/core'
import { asDeepSpeedRuns } from './deepspeed-precision.js'
import { engineOf } from './engine.js'
import { FORMAT_NAMES, type FormatName } from './format-names.js'
import { checkpointDir, planSlug } from './plan-facts.js'
import { getFormat } from './registry.js'
import { jsonDocument, textFile } from './render.js'
import { FORMAT_STACK, STACK_SETTINGS_FILE, stackSettings } from './stack-settings.js'
import type { ClusterShape, Exporter, ExportFile, FormatContext } from './types.js'

export interface ExportOptions {
  format: string
  /** Run the plan on this many identical nodes (accumulation rescaled to hold the effective batch). */
  nodes?: number | null
  /** Phase A/B meta-config: two full plans under phase-a/ and phase-b/ plus rigfit-meta.json. */
  meta?: boolean
  datasetBytes?: number | null
  /** Measured storage, network and RAM (from a HardwareProfile); without them decisions say what is unknown. */
  io?: IoFacts
  hosts?: string[]
  portable?: boolean
  /** The allocation of a cluster profile: Slurm and torchrun exports are written for it. */
  cluster?: ClusterShape | null
}

export interface ExportResult {
  format: string
  plan: TrainingPlan
  files: ExportFile[]
  warnings: Advice[]
  streaming: StreamingDecision
  cache: CacheDecision
  meta: { phases: PhaseSummary[]; totalTokens: number; totalHours: number } | null
}

export const META_FILE = 'rigfit-meta.json'

/** The run name of a plan, or of one phase of a meta-config; it names the checkpoint directory. */
function runNameOf(plan: TrainingPlan, phase: 'a' | 'b' | null): string {
  return phase === null ? planSlug(plan) : `${planSlug(plan)}_phase_${phase}`
}

function renderValidated(
  exporter: Exporter,
  plan: TrainingPlan,
  ctx: FormatContext,
  phase: 'a' | 'b' | null,
): ExportFile[] {
  const label = phase === null ? '' : ` of phase ${phase.toUpperCase()}`
  const files = exporter.render(plan, { ...ctx, runName: runNameOf(plan, phase) })
  const problems = exporter.validate(files, plan)
  if (problems.length > 0) {
    throw new RigfitError(
      'validation',
      'E_EXPORT_INVALID',
      `the ${exporter.name} export${label} fails its target's rules: ${problems.join('; ')}`,
      {
        suggestion:
          'Nothing was written. Check the plan with `rigfit export --format rigfit`; report the plan if it looks right.',
        details: problems,
      },
    )
  }
  return files
}

const inDir = (dir: string, files: ExportFile[]) => files.map((f) => ({ ...f, path: `${dir}/${f.path}` }))

/**
 * Renders a plan in one format, validated against the target's rules, with the dataset streaming and cache
 * decisions. Pure: nothing is written (see writeExportFiles). Throws a RigfitError when the plan contradicts
 * itself, the format cannot express it, or any output file fails validation.
 */
export function exportPlan(input: TrainingPlan, options: ExportOptions): ExportResult {
  const exporter = getFormat(options.format)
  assertPlanConsistent(input, 'the plan')
  const scaled = options.nodes == null ? input : planForNodes(input, options.nodes)
  // A pure-half plan that this format runs under DeepSpeed trains as DeepSpeed trains it (fp32 master weights).
  const plan =
    exporter.name === 'deepspeed' || engineOf(scaled).kind === 'deepspeed' ? asDeepSpeedRuns(scaled) : scaled
  const hosts = options.hosts ?? []
  if (hosts.length > 0 && hosts.length !== plan.settings.nodes) {
    throw new RigfitError(
      'usage',
      'E_HOSTS',
      `--hosts names ${hosts.length} host(s) but the plan runs on ${plan.settings.nodes} node(s)`,
      {
        suggestion: 'Give one host name per node, first the rendezvous host: --hosts a,b.',
      },
    )
  }
  const unsupported = exporter.unsupportedReason(plan)
  if (unsupported) {
    throw new RigfitError(
      'validation',
      'E_FORMAT_UNSUPPORTED',
      `the ${exporter.name} format cannot express this plan: ${unsupported}`,
      {
        suggestion: `Choose another format: ${FORMAT_NAMES.filter((f) => f !== exporter.name).join(', ')}.`,
      },
    )
  }
  const formatWarnings = new Map<string, Advice>()
  const ctx: FormatContext = {
    cluster: options.cluster ?? null,
    hosts,
    runName: planSlug(plan),
    portable: options.portable ?? false,
    resume: null,
    warn: (id, message) => formatWarnings.set(id, exporterAdvice(id, message)),
  }
  let files: ExportFile[]
  let meta: ExportResult['meta'] = null
  const planWarnings = plan.warnings.filter((w) => !input.warnings.some((o) => o.id === w.id))
  if (options.meta) {
    const phases = deriveMetaPlans(plan)
    meta = { phases: phases.phases, totalTokens: phases.totalTokens, totalHours: phases.totalHours }
    files = [
      ...inDir('phase-a', renderValidated(exporter, phases.phaseA, ctx, 'a')),
      ...inDir(
        'phase-b',
        renderValidated(
          exporter,
          phases.phaseB,
          {
            ...ctx,
            resume: {
              from: checkpointDir(runNameOf(phases.phaseA, 'a')),
              stepsBefore: phases.phaseA.time.steps,
            },
          },
          'b',
        ),
      ),
      textFile(
        META_FILE,
        jsonDocument({ format: exporter.name, mode: plan.mode, hardware: plan.hardware.summary, ...meta }),
      ),
    ]
    const known = (w: Advice) => [...plan.warnings, ...planWarnings].some((o) => o.id === w.id)
    for (const phase of [phases.phaseA, phases.phaseB])
      planWarnings.push(...phase.warnings.filter((w) => !known(w)))
  } else {
    files = renderValidated(exporter, plan, ctx, null)
  }
  // Every setting the estimate assumed, whatever the format can say of it, and a plan made for another stack named.
  files.push(textFile(STACK_SETTINGS_FILE, jsonDocument(stackSettings(plan))))
  const formatStack = FORMAT_STACK[exporter.name as FormatName]
  if (plan.stack !== undefined && !plan.stack.startsWith(`${formatStack}@`)) {
    formatWarnings.set(
      'export-stack',
      exporterAdvice(
        'export-stack',
        `The plan was estimated for ${plan.stack}, but ${exporter.name} files run under ${formatStack}: its memory differs (logits upcast, adapter type). Plan again with --stack ${formatStack}, or export with --mode to plan for this format.`,
      ),
    )
  }
  const io = options.io ?? NO_IO_FACTS
  return {
    format: exporter.name,
    plan,
    files,
    warnings: [...planWarnings, ...formatWarnings.values()],
    streaming: decideStreaming(plan, io, options.datasetBytes ?? null),
    cache: sizeCache(plan, io, options.datasetBytes ?? null),
    meta,
  }
}
