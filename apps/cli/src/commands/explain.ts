import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Args, Flags } from '@oclif/core'
import {
  closestName,
  type Decisions,
  decide,
  deriveFacts,
  explainedSettings,
  explainSetting,
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
} from '@rigfit/core'
import { RigfitCommand } from '../lib/base-command.js'
import { formatProblem, loadAllPacks } from '../lib/packs.js'
import { profileSourceFlags, resolveProfile } from '../lib/profile-source.js'

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
    'Runs the rule packs on this machine (or on --from FILE, or on a what-if --gpu) and shows, for the setting, the rule that decided it, the pack and layer it came from, the facts it read, the rules it overrode, caps and forbidden values. Without a setting, every setting the packs decide. With --plan, reads the trace of a saved plan instead.'
  static override examples = [
    '<%= config.bin %> explain precision',
    '<%= config.bin %> explain compile --gpu "Radeon PRO W7900"',
    '<%= config.bin %> explain dataloaderWorkers --mode extreme --from profile.json --json',
    '<%= config.bin %> explain --plan plan.json compile',
  ]

  static override args = {
    setting: Args.string({ description: `A setting (${SETTING_NAMES.join(', ')}); all when left out.` }),
  }

  static override flags = {
    mode: Flags.string({ description: 'Plan mode.', options: [...Mode.options], default: 'balanced' }),
    rules: Flags.string({ description: 'Also load the packs in this folder (or this pack).', helpValue: 'DIR' }),
    plan: Flags.string({ description: 'Explain from a saved plan\'s trace (rigfit plan --json > plan.json).', helpValue: 'FILE', exclusive: ['from', 'gpu'] }),
    ...profileSourceFlags,
  }

  async run(): Promise<ExplainResult> {
    const { args, flags } = await this.parse(Explain)
    const mode = Mode.parse(flags.mode)
    if (flags.plan !== undefined) return this.fromPlan(flags.plan, args.setting)

    const settings = args.setting === undefined ? null : [settingName(args.setting)]
    const { packs, problems } = await loadAllPacks(this, { rulesDir: flags.rules })
    for (const problem of problems) this.warn(`pack skipped: ${formatProblem(problem)}`)
    const profile = await resolveProfile(this, flags)
    const decisions = await decide(packs, deriveFacts(profile, null, mode))
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
      this.log(`${mode} mode on ${hardware.gpus.length > 0 ? hardware.gpus.join(', ') : hardware.cpu}${profile.source === 'detected' ? '' : ` (${profile.source} profile)`}`)
      this.log(`packs in force: ${decisions.packs.filter((p) => p.applies).map((p) => `${p.name} (${p.layer})`).join(', ')}\n`)
      for (const item of explained) this.log(renderExplanation(item))
    }
    return { source: 'rules', mode, hardware, settings: explained, packs: decisions.packs, facts: decisions.facts }
  }

  private fromPlan(file: string, setting: string | undefined): ExplainResult {
    if (!existsSync(file)) {
      throw new RigfitError('input', 'E_NO_SUCH_FILE', `--plan ${file}: no such file`, { suggestion: 'Save a plan first: rigfit plan --json > plan.json.' })
    }
    let json: unknown
    try {
      json = JSON.parse(readFileSync(file, 'utf8'))
    } catch (error) {
      throw new RigfitError('input', 'E_PLAN_JSON', `--plan ${file}: not valid JSON (${(error as Error).message})`, {
        suggestion: 'Pass the JSON that rigfit plan --json prints.',
      })
    }
    const candidate = json !== null && typeof json === 'object' && 'plan' in json ? (json as { plan: unknown }).plan : json
    const parsed = TrainingPlan.safeParse(candidate)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      throw new RigfitError('validation', 'E_PLAN_INVALID', `--plan ${file}: not a training plan (${issue?.path.join('.') || '(root)'}: ${issue?.message})`, {
        suggestion: 'Pass the JSON that rigfit plan --json prints.',
      })
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
    if (!this.jsonEnabled()) {
      this.log(`${plan.mode} plan from ${file}\n`)
      for (const entry of trace) {
        this.log(`${entry.setting} = ${JSON.stringify(entry.value)}`)
        this.log(`  decided by  ${entry.pack}/${entry.rule} (${entry.layer})`)
        this.log(`  because     ${entry.reason}`)
        if (Object.keys(entry.facts).length > 0) this.log(`  facts read  ${formatFacts(entry.facts)}`)
        this.log('')
      }
    }
    return { source: 'plan', mode: plan.mode, plan: file, trace }
  }
}

/** A setting name as the packs know it: `compile`, or its plan path `compile.enabled`. */
function settingName(input: string): SettingName {
  const byName = SETTING_NAMES.find((name) => name.toLowerCase() === input.toLowerCase())
  const byPath = SETTING_NAMES.find((name) => SETTING_PLAN_PATHS[name].toLowerCase() === input.toLowerCase())
  const found = byName ?? byPath
  if (found) return found
  const near = closestName(input, [...SETTING_NAMES])
  throw new RigfitError('usage', 'E_UNKNOWN_SETTING', `"${input}" is not a setting the rule packs decide`, {
    suggestion: near ? `Did you mean "${near}"? Settings: ${SETTING_NAMES.join(', ')}.` : `Settings: ${SETTING_NAMES.join(', ')}.`,
  })
}

function docsOf(provenance: Provenance | null, packs: LoadedPack[]): string | null {
  if (!provenance) return null
  const pack = packs.find((p) => p.meta.name === provenance.pack)
  if (!pack) return null
  const path = join(pack.origin.path, 'docs', `${provenance.rule}.md`)
  return existsSync(path) ? path : null
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
    lines.push(`  decided by  ${p.pack}/${p.rule} (${p.layer} layer, priority ${p.priority})${decision.source === 'forbid' ? ', the other value being forbidden' : ''}`)
    lines.push(`  because     ${p.reason}`)
    if (Object.keys(p.facts).length > 0) lines.push(`  facts read  ${formatFacts(p.facts)}`)
    for (const other of decision.overridden) {
      const why = other.why === 'forbidden' ? `forbidden by ${other.forbiddenBy}` : 'lower precedence'
      lines.push(`  overrode    ${other.provenance.pack}/${other.provenance.rule} (priority ${other.provenance.priority}): ${JSON.stringify(other.value)}, ${why}`)
    }
  } else {
    lines.push(`${item.setting}: no rule decides it here; the planner chooses`)
  }
  if (cap) {
    const lowered = decision?.cappedFrom !== null && decision?.cappedFrom !== undefined ? ` (lowered from ${decision.cappedFrom})` : ''
    lines.push(`  capped at   ${cap.max} by ${cap.provenance.pack}/${cap.provenance.rule}${lowered}: ${cap.provenance.reason}`)
  }
  for (const forbid of item.forbids) {
    lines.push(`  forbidden   ${JSON.stringify(forbid.value)} by ${forbid.provenance.pack}/${forbid.provenance.rule}: ${forbid.provenance.reason}`)
  }
  if (item.docs) lines.push(`  docs        ${item.docs}`)
  return `${lines.join('\n')}\n`
}
