import {
  type Advice,
  type CacheDecision,
  exporterAdvice,
  type IoFacts,
  type MetaPlans,
  type PhaseSummary,
  planToWrite,
  RigfitError,
  type StreamingDecision,
  type TrainingPlan,
} from '@rigfit/core'
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
 * decisions. Core revises the plan (nodes, DeepSpeed's precision, meta phases, streaming, cache); this only
 * formats it. Pure: nothing is written (see writeExportFiles). Throws a RigfitError when the plan contradicts
 * itself, the format cannot express it, or any output file fails validation.
 */
export function exportPlan(input: TrainingPlan, options: ExportOptions): ExportResult {
  const exporter = getFormat(options.format)
  const hosts = options.hosts ?? []
  const revised = planToWrite(input, {
    nodes: options.nodes,
    meta: options.meta,
    datasetBytes: options.datasetBytes,
    io: options.io,
    // A pure-half plan that this format runs under DeepSpeed trains as DeepSpeed trains it (fp32 master weights).
    runsUnderDeepSpeed: (plan) => exporter.name === 'deepspeed' || engineOf(plan).kind === 'deepspeed',
    accept: (plan) => assertExportable(exporter, plan, hosts),
  })
  const { plan, phases } = revised
  const formatWarnings = new Map<string, Advice>()
  const ctx: FormatContext = {
    cluster: options.cluster ?? null,
    hosts,
    runName: planSlug(plan),
    portable: options.portable ?? false,
    resume: null,
    warn: (id, message) => formatWarnings.set(id, exporterAdvice(id, message)),
  }
  const meta = phases ? metaSummary(phases) : null
  const files = phases ? metaFiles(exporter, plan, phases, ctx) : renderValidated(exporter, plan, ctx, null)
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
  return {
    format: exporter.name,
    plan,
    files,
    warnings: [...revised.warnings, ...formatWarnings.values()],
    streaming: revised.streaming,
    cache: revised.cache,
    meta,
  }
}

/** Refuses a plan the format cannot write: hosts that are not one per node, or settings it cannot express. */
function assertExportable(exporter: Exporter, plan: TrainingPlan, hosts: string[]): void {
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
}

/** A meta-config's files: phase A, phase B resuming from A's checkpoint, and rigfit-meta.json. */
function metaFiles(
  exporter: Exporter,
  plan: TrainingPlan,
  phases: MetaPlans,
  ctx: FormatContext,
): ExportFile[] {
  const resume = {
    from: checkpointDir(runNameOf(phases.phaseA, 'a')),
    stepsBefore: phases.phaseA.time.steps,
  }
  return [
    ...inDir('phase-a', renderValidated(exporter, phases.phaseA, ctx, 'a')),
    ...inDir('phase-b', renderValidated(exporter, phases.phaseB, { ...ctx, resume }, 'b')),
    textFile(
      META_FILE,
      jsonDocument({
        format: exporter.name,
        mode: plan.mode,
        hardware: plan.hardware.summary,
        ...metaSummary(phases),
      }),
    ),
  ]
}

const metaSummary = (phases: MetaPlans): NonNullable<ExportResult['meta']> => ({
  phases: phases.phases,
  totalTokens: phases.totalTokens,
  totalHours: phases.totalHours,
})
