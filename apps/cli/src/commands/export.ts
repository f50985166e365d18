import { Flags, type Interfaces } from '@oclif/core'
import {
  type Advice,
  CURRENT_STACK_VERSION,
  ioFactsFromProfile,
  MODES,
  type Mode,
  parseSizeBytes,
  RigfitError,
  type TrainingPlan,
} from '@rigfit/core'
import {
  EXPORT_MANIFEST_FILE,
  type ExportResult,
  exportPlan,
  FORMAT_NAMES,
  FORMAT_STACK,
  type FolderWrite,
  type FormatName,
  manifestEntry,
  manifestFile,
  readExportManifest,
  readPlanFile,
  readProfileIoFacts,
  writeExportFolder,
} from '@rigfit/exporters'
import { RigfitCommand } from '../lib/base-command.js'
import { type Cluster, resolvePlanningTarget } from '../lib/cluster.js'
import { clusterShape } from '../lib/cluster-shape.js'
import { inputTimeoutFlags, inputTimeoutMs } from '../lib/input-timeout.js'
import { instanceFlags } from '../lib/instance.js'
import { type PlanModesOptions, planModes, planNotices } from '../lib/planning.js'
import { planningFlags, planOptionsFromFlags } from '../lib/planning-flags.js'
import { profileSourceFlags } from '../lib/profile-source.js'
import { workloadFlags, workloadFromFlags } from '../lib/workload-flags.js'

// `--nodes` (scale a plan to N nodes) and `--dataset-size` are export's own flags; the workload's copies are left out.
const { nodes: _workloadNodes, 'dataset-size': _datasetSize, ...exportWorkloadFlags } = workloadFlags

function summary(result: ExportResult): string[] {
  const lines = [
    `Dataset: ${result.streaming.mode}, ${result.streaming.workers} workers, prefetch ${result.streaming.prefetchFactor}`,
  ]
  lines.push(...result.streaming.reasons.map((r) => `  ${r}`))
  lines.push(`Cache: ${result.cache.tier}${result.cache.mount ? ` on ${result.cache.mount}` : ''}`)
  lines.push(...result.cache.reasons.map((r) => `  ${r}`))
  if (result.meta) {
    for (const p of result.meta.phases) {
      lines.push(
        `Phase ${p.name} (${p.dir}/): ${p.purpose}, seq ${p.seq}, ${p.tokens.toLocaleString('en-US')} tokens, ${p.steps} steps, ${p.hours.toFixed(1)} h`,
      )
    }
  }
  if (result.warnings.length > 0) lines.push('Warnings:', ...result.warnings.map((w) => `  - ${w.message}`))
  return lines
}

export default class Export extends RigfitCommand {
  static override description =
    'Export a training plan to a trainer: HF TrainingArguments, accelerate, DeepSpeed, torchrun, SLURM, Lightning, Hydra, Kconfig, a PyTorch settings module, or the plan JSON.'

  static override examples = [
    '<%= config.bin %> export --mode balanced --format hf --out run/',
    '<%= config.bin %> export --mode extreme --gpu "RTX 4090" --model llama-3.2-1b --format deepspeed',
    '<%= config.bin %> export --plan plan.json --format hf --out run/',
    '<%= config.bin %> export --plan plan.json --format torchrun --nodes 2 --out launch/',
    '<%= config.bin %> export --plan plan.json --format deepspeed --meta --dataset-size 200GB --profile profile.json --json',
    '<%= config.bin %> export --plan plan.json --from cluster.json --format slurm --out job/',
  ]

  static override flags = {
    ...inputTimeoutFlags,
    plan: Flags.string({
      description: 'TrainingPlan JSON to export (from `rigfit plan --json` or `--format rigfit`).',
      exclusive: ['mode'],
    }),
    mode: Flags.string({
      description:
        'Plan this machine (or the --gpu/--from/--instance hardware) in this mode and export that plan.',
      options: [...MODES],
      exclusive: ['plan'],
    }),
    format: Flags.string({ description: 'Target format.', options: [...FORMAT_NAMES], required: true }),
    out: Flags.string({ description: 'Directory to write the files into; without it they are printed.' }),
    force: Flags.boolean({
      description:
        'Replace the export in --out: its files are replaced, files of the earlier export (listed in its rigfit-export.json) that this one does not write are removed, other files are kept.',
      default: false,
    }),
    nodes: Flags.integer({
      description:
        'Run on this many identical nodes: with --mode the plan is made for them (as `rigfit plan --nodes N`); a --plan file is rescaled to them (accumulation holds the effective batch).',
      min: 1,
    }),
    hosts: Flags.string({
      description:
        'Comma-separated host names, one per node, rendezvous host first (DeepSpeed hostfile, accelerate main_process_ip).',
    }),
    meta: Flags.boolean({
      description: 'Phase A/B meta-config: bulk at short sequence, then long-sequence extension.',
      default: false,
    }),
    'dataset-size': Flags.string({
      description: 'Dataset size for streaming and cache decisions (e.g. 200GB, 1.5TiB).',
    }),
    profile: Flags.string({
      description: 'HardwareProfile JSON with measured disk, network and RAM (from `rigfit profile --out`).',
    }),
    portable: Flags.boolean({
      description: "Kconfig: leave batch size and compile to the trainer's AUTO detection.",
      default: false,
    }),
    ...profileSourceFlags,
    ...instanceFlags,
    ...exportWorkloadFlags,
    ...planningFlags,
  }

  async run(): Promise<Record<string, unknown>> {
    const { flags } = await this.parse(Export)
    const datasetBytes = flags['dataset-size'] === undefined ? null : parseSizeBytes(flags['dataset-size'])
    const options = planOptionsFromFlags(flags, {
      name: FORMAT_STACK[flags.format as FormatName],
      version: CURRENT_STACK_VERSION[FORMAT_STACK[flags.format as FormatName]],
    })
    const { plan, io, notices, cluster } = flags.plan
      ? {
          plan: await readPlanFile(flags.plan, inputTimeoutMs(flags)),
          io: flags.profile === undefined ? undefined : await readProfileIoFacts(flags.profile),
          notices: [],
          // A cluster profile beside a plan file gives the job its shape (nodes, partition, network).
          cluster: flags.from === undefined ? null : (await resolvePlanningTarget(this, flags)).cluster,
        }
      : await this.planFor(flags, options)
    const shape = cluster ? clusterShape(cluster) : null
    const hosts =
      flags.hosts
        ?.split(',')
        .map((h) => h.trim())
        .filter((h) => h !== '') ?? []
    if (shape && flags.nodes !== undefined && flags.nodes !== shape.nodes.length) {
      throw new RigfitError(
        'usage',
        'E_CLUSTER_NODES',
        `--nodes ${flags.nodes} differs from the ${shape.nodes.length} node(s) of the cluster profile ${flags.from}.`,
        { suggestion: 'Drop --nodes: an export from a cluster profile runs on its nodes.' },
      )
    }
    const exportOptions = {
      format: flags.format,
      nodes: flags.nodes ?? shape?.nodes.length ?? null,
      cluster: shape,
      meta: flags.meta,
      datasetBytes,
      io,
      hosts: hosts.length === 0 && shape ? shape.nodes : hosts,
      portable: flags.portable,
    }
    const result = exportPlan(plan, exportOptions)
    let written: string[] | null = null
    if (flags.out !== undefined) {
      const earlier = await earlierManifest(flags.out, flags.force)
      const folder = await writeExportFolder(
        flags.out,
        // The manifest lets `rigfit monitor --configs` make the same export again for a relaunch.
        [...result.files, manifestFile(earlier, manifestEntry(plan, exportOptions, result))],
        { force: flags.force, ownFiles: [EXPORT_MANIFEST_FILE], format: result.format, earlier },
      )
      written = folder.written
      result.warnings.push(...folderWarnings(flags.out, folder, flags.force))
    }
    // How the plan was made (skipped rule packs, an assumed CPU) matters to its files too.
    result.warnings.unshift(...notices.filter((notice) => !result.warnings.some((w) => w.id === notice.id)))
    const json = {
      files: result.files.map((f) => ({ path: f.path, content: f.content })),
      warnings: result.warnings,
      streaming: result.streaming,
      cache: result.cache,
      meta: result.meta,
      written,
    }
    if (this.jsonEnabled()) return json
    if (written) {
      this.log(`Wrote ${written.length} file(s) for ${result.format}:`)
      for (const path of written) this.log(`  ${path}`)
      for (const line of summary(result)) this.log(line)
    } else {
      for (const f of result.files) this.log(`==> ${f.path} <==\n${f.content}`)
      for (const line of summary(result)) this.writeErr(`${line}\n`)
    }
    return json
  }

  /** `--mode`: plan the hardware now, as `rigfit plan --mode M` would, and use its profile's measured I/O. */
  private async planFor(
    flags: Interfaces.InferredFlags<(typeof Export)['flags']>,
    options: PlanModesOptions,
  ) {
    if (!flags.mode) {
      throw new RigfitError(
        'usage',
        'E_EXPORT_SOURCE',
        'Say which plan to export: --mode M or --plan FILE.',
        {
          suggestion:
            'For example `rigfit export --mode balanced --format hf`, or `rigfit export --plan plan.json --format hf`.',
        },
      )
    }
    const mode = flags.mode as Mode
    const { profile, cluster } = await resolvePlanningTarget(this, flags)
    // Planned for the job's nodes, as `rigfit plan --nodes N` plans it (strategy, sharding and micro-batch chosen
    // for every rank), so the export is that plan rather than a one-node plan rescaled.
    const workload = await workloadFromFlags(
      {
        ...flags,
        nodes: cluster?.nodes ?? flags.nodes ?? 1,
        'dataset-size': flags['dataset-size'],
      },
      this.config.cacheDir,
    )
    const { plans, failures, packProblems } = await planModes(this, profile, workload, [mode], {
      ...options,
      notices: cluster?.advice ?? [],
    })
    const failure = failures[mode]
    if (failure) throw failure
    return {
      plan: plans[mode] as TrainingPlan,
      cluster: cluster as Cluster | null,
      notices: [...(cluster?.advice ?? []), ...planNotices(profile, packProblems)],
      io: flags.profile === undefined ? ioFactsFromProfile(profile) : await readProfileIoFacts(flags.profile),
    }
  }
}

/** What replacing the folder kept, removed or recovered, as warnings. */
function folderWarnings(out: string, folder: FolderWrite, force: boolean): Advice[] {
  const warnings: Advice[] = []
  const advice = (id: string, message: string) => ({
    id,
    message,
    source: 'rigfit export',
    expectedGain: null,
  })
  if (force && folder.keptUnlisted.length > 0)
    warnings.push(
      advice(
        'export-kept-files',
        `Kept ${folder.keptUnlisted.length} file(s) in ${out} that no earlier rigfit export lists: ${folder.keptUnlisted.join(', ')}.`,
      ),
    )
  if (folder.removed.length > 0)
    warnings.push(
      advice(
        'export-removed-files',
        `Removed the earlier export's ${folder.removed.join(', ')}, which this one does not write.`,
      ),
    )
  for (const note of folder.recovered)
    warnings.push(advice('export-recovered', `A killed export left ${out} mid-change: ${note}.`))
  return warnings
}

/** The folder's manifest of earlier exports; with --force a broken one is replaced rather than kept. */
async function earlierManifest(dir: string, force: boolean) {
  try {
    return await readExportManifest(dir)
  } catch (error) {
    if (force) return null
    throw error
  }
}
