import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Args, Flags } from '@oclif/core'
import {
  closestName,
  type Decisions,
  decide,
  deriveFacts,
  displayPath,
  explainedSettings,
  explainSetting,
  type HardwareProfile,
  type LoadedPack,
  Mode,
  type Provenance,
  RigfitError,
  SETTING_NAMES,
  SETTING_PLAN_PATHS,
  type SettingExplanation,
  type SettingName,
  type TraceEntry,
  TrainingPlan,
  traceFor,
  type Workload,
} from '@rigfit/core'
import { RigfitCommand } from '../lib/base-command.js'
import { formatProblem, loadAllPacks } from '../lib/packs.js'
import { planModes } from '../lib/planning.js'
import { profileSourceFlags, resolveProfile } from '../lib/profile-source.js'
import { workloadFlags, workloadFromFlags } from '../lib/workload-flags.js'

type ExplainedSetting = SettingExplanation & { docs: string | null }

export type ExplainResult =
  | {
      source: 'rules'
      mode: Mode
      hardware: { source: string; gpus: string[]; cpu: string }
      settings: ExplainedSetting[]
      packs: Decisions['packs']
      facts: Decisions['facts']
    }
  | { source: 'plan'; mode: Mode; plan: string; trace: TraceEntry[] }

export default class Explain extends RigfitCommand {
  static override summary = 'Show the rules, packs and facts behind a setting.'
  static override description =
    'Runs the rule packs on this machine (or on --from FILE, or on a what-if --gpu) and shows, for the setting, the rule that decided it, the pack and layer it came from, the facts it read, the rules it overrode, caps and forbidden values. A setting no rule sets (micro-batch, sequence, checkpointing, sharding, model, accumulation) is explained from the plan the mode makes: the search step that chose it and the figures it weighed. Without a setting, every setting the packs decide. With --plan, reads the trace of a saved plan instead.'
  static override examples = [
    '<%= config.bin %> explain precision',
    '<%= config.bin %> explain compile --gpu "Radeon PRO W7900"',
    '<%= config.bin %> explain dataloaderWorkers --mode extreme --from profile.json --json',
    '<%= config.bin %> explain --plan plan.json compile',
    '<%= config.bin %> explain microBatch --mode extreme --gpu "RTX 4090" --model llama-3.2-1b',
  ]

  static override args = {
    setting: Args.string({ description: `A setting (${SETTING_NAMES.join(', ')}); all when left out.` }),
  }

  static override flags = {
    mode: Flags.string({ description: 'Plan mode.', options: [...Mode.options], default: 'balanced' }),
    rules: Flags.string({
      description: 'Also load the packs in this folder (or this pack).',
      helpValue: 'DIR',
    }),
    plan: Flags.string({
      description: "Explain from a saved plan's trace (rigfit plan --json > plan.json).",
      helpValue: 'FILE',
      exclusive: ['from', 'gpu'],
    }),
    ...profileSourceFlags,
    ...workloadFlags,
  }

  async run(): Promise<ExplainResult> {
    const { args, flags } = await this.parse(Explain)
    const mode = Mode.parse(flags.mode)
    if (flags.plan !== undefined) return this.fromPlan(flags.plan, args.setting)

    const requested = args.setting === undefined ? null : settingName(args.setting)
    const { packs, problems } = await loadAllPacks(this, { rulesDir: flags.rules })
    for (const problem of problems) this.warn(`pack skipped: ${formatProblem(problem)}`)
    const profile = await resolveProfile(this, flags)
    const workload = await workloadFromFlags(flags)
    if (requested !== null && isSearched(requested))
      return this.fromGeneratedPlan(profile, workload, mode, requested, flags.rules)
    const decisions = await decide(packs, deriveFacts(profile, workload, mode))
    if (requested !== null && !decisions.settings[requested]) {
      // No rule sets it: the planner's search chose it, within any caps and forbids the packs laid down.
      return this.fromGeneratedPlan(
        profile,
        workload,
        mode,
        requested,
        flags.rules,
        explainSetting(decisions, requested),
      )
    }
    const settings = requested === null ? null : [requested]
    const explained = (settings ?? explainedSettings(decisions)).map((name) => ({
      ...explainSetting(decisions, name),
      docs: docsOf(decisions.settings[name]?.provenance ?? null, packs),
    }))
    const hardware = {
      source: profile.source,
      gpus: profile.gpus.map((gpu) => gpu.name),
      cpu: `${profile.cpu.brand} (${profile.cpu.physicalCores} cores)`,
    }
    if (!this.jsonEnabled()) {
      this.log(
        `${mode} mode on ${hardware.gpus.length > 0 ? hardware.gpus.join(', ') : hardware.cpu}${profile.source === 'detected' ? '' : ` (${profile.source} profile)`}`,
      )
      this.log(
        `packs in force: ${decisions.packs
          .filter((p) => p.applies)
          .map((p) => `${p.name} (${p.layer})`)
          .join(', ')}\n`,
      )
      for (const item of explained) this.log(renderExplanation(item))
    }
    return {
      source: 'rules',
      mode,
      hardware,
      settings: explained,
      packs: decisions.packs,
      facts: decisions.facts,
    }
  }

  private fromPlan(file: string, setting: string | undefined): ExplainResult {
    if (!existsSync(file)) {
      throw new RigfitError('input', 'E_NO_SUCH_FILE', `--plan ${file}: no such file`, {
        suggestion: 'Save a plan first: rigfit plan --json > plan.json.',
      })
    }
    let json: unknown
    try {
      json = JSON.parse(readFileSync(file, 'utf8'))
    } catch (error) {
      throw new RigfitError(
        'input',
        'E_PLAN_JSON',
        `--plan ${file}: not valid JSON (${(error as Error).message})`,
        {
          suggestion: 'Pass the JSON that rigfit plan --json prints.',
        },
      )
    }
    const candidate =
      json !== null && typeof json === 'object' && 'plan' in json ? (json as { plan: unknown }).plan : json
    const parsed = TrainingPlan.safeParse(candidate)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      throw new RigfitError(
        'validation',
        'E_PLAN_INVALID',
        `--plan ${file}: not a training plan (${issue?.path.join('.') || '(root)'}: ${issue?.message})`,
        {
          suggestion: 'Pass the JSON that rigfit plan --json prints.',
        },
      )
    }
    const plan = parsed.data
    const trace = setting === undefined ? plan.trace : traceFor(plan.trace, setting)
    if (setting !== undefined && trace.length === 0) {
      const known = [...new Set(plan.trace.map((entry) => entry.setting))]
      const near = closestName(setting, known)
      throw new RigfitError('usage', 'E_NOT_IN_TRACE', `the plan's trace says nothing about "${setting}"`, {
        suggestion: near ? `Did you mean "${near}"?` : `The trace covers: ${known.join(', ')}.`,
      })
    }
    if (!this.jsonEnabled()) this.log(renderTrace(`${plan.mode} plan from ${file}`, trace))
    return { source: 'plan', mode: plan.mode, plan: file, trace }
  }

  /** Plans the mode now and shows the trace entries for the setting: the search step, or the rule, that chose it. */
  private async fromGeneratedPlan(
    profile: HardwareProfile,
    workload: Workload,
    mode: Mode,
    setting: string,
    rulesDir: string | undefined,
    limits?: SettingExplanation,
  ): Promise<ExplainResult> {
    const { plans, failures } = await planModes(this, profile, workload, [mode], { rulesDir })
    const failure = failures[mode]
    if (failure) throw failure
    const plan = plans[mode] as TrainingPlan
    const trace = traceFor(plan.trace, setting)
    if (!this.jsonEnabled()) {
      this.log(renderTrace(`${mode} plan for ${plan.hardware.summary}`, trace))
      if (limits && (limits.cap || limits.forbids.length > 0))
        this.log(renderExplanation({ ...limits, docs: null }))
    }
    return { source: 'plan', mode, plan: 'generated', trace }
  }
}

function renderTrace(title: string, trace: TraceEntry[]): string {
  const lines = [`${title}\n`]
  for (const entry of trace) {
    lines.push(`${entry.setting} = ${JSON.stringify(entry.value)}`)
    lines.push(`  decided by  ${entry.pack}/${entry.rule} (${entry.layer})`)
    lines.push(`  because     ${entry.reason}`)
    if (Object.keys(entry.facts).length > 0) lines.push(`  facts read  ${formatFacts(entry.facts)}`)
    lines.push('')
  }
  return lines.join('\n')
}

/** Settings only the planner's search decides (the rule packs may cap them, never set them outright). */
const SEARCHED_SETTINGS = ['model', 'gradAccum'] as const
type SearchedSetting = (typeof SEARCHED_SETTINGS)[number]

/** A setting name as the packs know it (`compile`, or its plan path `compile.enabled`), or one the planner searches. */
function settingName(input: string): SettingName | SearchedSetting {
  const lower = input.toLowerCase()
  const byName = SETTING_NAMES.find((name) => name.toLowerCase() === lower)
  const byPath = SETTING_NAMES.find((name) => SETTING_PLAN_PATHS[name].toLowerCase() === lower)
  const searched = SEARCHED_SETTINGS.find((name) => name.toLowerCase() === lower)
  const found = byName ?? byPath ?? searched
  if (found) return found
  const all = [...SETTING_NAMES, ...SEARCHED_SETTINGS]
  const near = closestName(input, all)
  throw new RigfitError('usage', 'E_UNKNOWN_SETTING', `"${input}" is not a setting rigfit decides`, {
    suggestion: near
      ? `Did you mean "${near}"? Settings: ${all.join(', ')}.`
      : `Settings: ${all.join(', ')}.`,
  })
}

const isSearched = (name: string): name is SearchedSetting =>
  (SEARCHED_SETTINGS as readonly string[]).includes(name)

function docsOf(provenance: Provenance | null, packs: LoadedPack[]): string | null {
  if (!provenance) return null
  const pack = packs.find((p) => p.meta.name === provenance.pack)
  if (!pack) return null
  const path = join(pack.origin.path, 'docs', `${provenance.rule}.md`)
  return existsSync(path) ? displayPath(path) : null
}

function formatFacts(facts: Record<string, unknown>): string {
  return Object.entries(facts)
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    .join(', ')
}

function renderExplanation(item: ExplainedSetting): string {
  const lines: string[] = []
  const { decision, cap } = item
  if (decision) {
    const p = decision.provenance
    lines.push(`${item.setting} = ${JSON.stringify(decision.value)}`)
    lines.push(
      `  decided by  ${p.pack}/${p.rule} (${p.layer} layer, priority ${p.priority})${decision.source === 'forbid' ? ', the other value being forbidden' : ''}`,
    )
    lines.push(`  because     ${p.reason}`)
    if (Object.keys(p.facts).length > 0) lines.push(`  facts read  ${formatFacts(p.facts)}`)
    for (const other of decision.overridden) {
      const why = other.why === 'forbidden' ? `forbidden by ${other.forbiddenBy}` : 'lower precedence'
      lines.push(
        `  overrode    ${other.provenance.pack}/${other.provenance.rule} (priority ${other.provenance.priority}): ${JSON.stringify(other.value)}, ${why}`,
      )
    }
  } else {
    lines.push(`${item.setting}: no rule decides it here; the planner chooses`)
  }
  if (cap) {
    const lowered =
      decision?.cappedFrom !== null && decision?.cappedFrom !== undefined
        ? ` (lowered from ${decision.cappedFrom})`
        : ''
    lines.push(
      `  capped at   ${cap.max} by ${cap.provenance.pack}/${cap.provenance.rule}${lowered}: ${cap.provenance.reason}`,
    )
  }
  for (const forbid of item.forbids) {
    lines.push(
      `  forbidden   ${JSON.stringify(forbid.value)} by ${forbid.provenance.pack}/${forbid.provenance.rule}: ${forbid.provenance.reason}`,
    )
  }
  if (item.docs) lines.push(`  docs        ${item.docs}`)
  return `${lines.join('\n')}\n`
}
