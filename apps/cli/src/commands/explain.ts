import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Args, Flags } from '@oclif/core'
import {
  closestName,
  DEFAULT_STACK,
  type Decisions,
  decide,
  deriveFacts,
  explainedSettings,
  explainSetting,
  explainStack,
  type LoadedPack,
  Mode,
  type Provenance,
  parseStackRef,
  RigfitError,
  SETTING_NAMES,
  SETTING_PLAN_PATHS,
  type SettingExplanation,
  type SettingName,
  type StackMechanismExplanation,
  type TraceEntry,
  type TrainingPlan,
  traceFor,
} from '@rigfit/core'
import { displayPath } from '@rigfit/core/node'
import { readPlanFile } from '@rigfit/exporters'
import { RigfitCommand } from '../lib/base-command.js'
import { inputTimeoutFlags, inputTimeoutMs } from '../lib/input-timeout.js'
import { instanceFlags, resolvePlanningProfile } from '../lib/instance.js'
import { formatProblem, loadAllPacks } from '../lib/packs.js'
import { planModes } from '../lib/planning.js'
import { parseTargetUtil, planningFlags } from '../lib/planning-flags.js'
import { profileSourceFlags } from '../lib/profile-source.js'
import { type ExplainedSetting, renderExplanation, renderStack, renderTrace } from '../lib/render-explain.js'
import { workloadFlags, workloadFromFlags } from '../lib/workload-flags.js'

export type ExplainResult =
  | {
      source: 'rules'
      mode: Mode
      /** `generated`: a plan made with the same flags; null when no plan fits (the packs' decisions alone). */
      plan: 'generated' | null
      hardware: { source: string; gpus: string[]; cpu: string }
      settings: ExplainedSetting[]
      packs: Decisions['packs']
      facts: Decisions['facts']
      /** The stack the plan assumed and, for each mechanism it decides, the stack table row behind it. */
      stack: StackMechanismExplanation[]
    }
  | { source: 'plan'; mode: Mode; plan: string; trace: TraceEntry[]; stack: StackMechanismExplanation[] }

/** Settings only a plan has: the search, or the generator, decides them (the packs may cap them, never set them). */
const PLAN_ONLY_SETTINGS = [
  'model',
  'gradAccum',
  'effectiveBatch',
  'nodes',
  'strategy',
  'lora',
  'learningRate',
  'throughput',
] as const
type PlanOnlySetting = (typeof PLAN_ONLY_SETTINGS)[number]

/** The planning flags `rigfit plan` takes, but --rules: explain's own also takes a single pack. */
const planningOptionFlags = {
  'psu-watts': planningFlags['psu-watts'],
  'base-batch': planningFlags['base-batch'],
  'target-util': planningFlags['target-util'],
  calibration: planningFlags.calibration,
  stack: planningFlags.stack,
}

export default class Explain extends RigfitCommand {
  static override summary = 'Show the rules, packs and facts behind a setting.'
  static override description =
    'Plans the mode with the same flags `rigfit plan` takes (this machine, --from FILE, a what-if --gpu or --instance) and shows, for the setting, the value the plan has and how it was decided: the rule that set it, the pack and layer it came from, the facts it read, the rules it overrode, caps and forbidden values, or the search step that chose it and the figures it weighed (and which rule preference it departed from, and why). Without a setting, every setting the packs decide. With --plan, reads the trace of a saved plan instead.'
  static override examples = [
    '<%= config.bin %> explain precision',
    '<%= config.bin %> explain compile --gpu "Radeon PRO W7900"',
    '<%= config.bin %> explain dataloaderWorkers --mode extreme --from profile.json --json',
    '<%= config.bin %> explain --plan plan.json compile',
    '<%= config.bin %> explain gradCheckpointing --mode extreme --gpu "RTX 4090" --model llama-3-8b --method lora',
  ]

  static override args = {
    setting: Args.string({
      description: `A setting (${[...SETTING_NAMES, ...PLAN_ONLY_SETTINGS].join(', ')}); all when left out.`,
    }),
  }

  static override flags = {
    ...inputTimeoutFlags,
    mode: Flags.string({ description: 'Plan mode.', options: [...Mode.options], default: 'balanced' }),
    rules: Flags.string({
      description: 'Also load the packs in this folder (or this pack).',
      helpValue: 'DIR',
    }),
    plan: Flags.string({
      description: "Explain from a saved plan's trace (rigfit plan --json > plan.json).",
      helpValue: 'FILE',
      exclusive: ['from', 'gpu', 'instance'],
    }),
    ...profileSourceFlags,
    ...instanceFlags,
    ...workloadFlags,
    ...planningOptionFlags,
  }

  async run(): Promise<ExplainResult> {
    const { args, flags } = await this.parse(Explain)
    const mode = Mode.parse(flags.mode)
    if (flags.plan !== undefined) return this.fromPlanFile(flags.plan, args.setting, inputTimeoutMs(flags))

    const requested = args.setting === undefined ? null : settingName(args.setting)
    const { packs, problems } = await loadAllPacks(this, { rulesDir: flags.rules })
    for (const problem of problems) this.warn(`pack skipped: ${formatProblem(problem)}`)
    const profile = await resolvePlanningProfile(this, flags)
    const workload = await workloadFromFlags(flags, this.config.cacheDir)
    const decisions = await decide(packs, deriveFacts(profile, workload, mode))
    const stackRef = flags.stack === undefined ? DEFAULT_STACK : parseStackRef(flags.stack)
    const stack = requested === null ? explainStack(stackRef) : []
    // The plan `rigfit plan` makes with these flags, by the same path (packs, decisions, generator).
    const { plans, failures } = await planModes(this, profile, workload, [mode], {
      rulesDir: flags.rules,
      psuWatts: flags['psu-watts'] ?? null,
      baseBatch: flags['base-batch'] ?? null,
      targetUtilization: parseTargetUtil(flags['target-util']),
      createdAt: new Date().toISOString(),
      useCalibration: flags.calibration,
      stack: stackRef,
    })
    const plan = plans[mode] ?? null
    const failure = failures[mode]
    if (failure) {
      // A setting no rule sets has nothing to show without a plan.
      if (requested === null || !isRuleSetting(requested) || !decisions.settings[requested]) throw failure
      this.warn(`${failure.message} Showing what the rule packs decide, which no plan uses.`)
    }
    if (requested !== null && (!isRuleSetting(requested) || !decisions.settings[requested])) {
      // No rule sets it: the search chose it, within any caps and forbids the packs laid down.
      const limits = isRuleSetting(requested) ? explainSetting(decisions, requested) : null
      return this.fromTrace(mode, plan as TrainingPlan, requested, 'generated', limits)
    }
    const names = requested === null ? explainedSettings(decisions) : [requested]
    const explained = names.map((name) => explainFromPlan(decisions, name, plan, packs))
    const hardware = {
      source: profile.source,
      gpus: profile.gpus.map((gpu) => gpu.name),
      cpu: `${profile.cpu.brand} (${profile.cpu.physicalCores} cores)`,
    }
    if (!this.jsonEnabled()) {
      this.log(
        `${mode} ${plan ? 'plan' : 'mode'} on ${plan ? plan.hardware.summary : hardware.gpus.length > 0 ? hardware.gpus.join(', ') : hardware.cpu}${profile.source === 'detected' ? '' : ` (${profile.source} profile)`}`,
      )
      this.log(
        `packs in force: ${decisions.packs
          .filter((p) => p.applies)
          .map((p) => `${p.name} (${p.layer})`)
          .join(', ')}\n`,
      )
      for (const item of explained) this.log(renderExplanation(item))
      if (stack.length > 0) this.log(renderStack(stack))
    }
    return {
      source: 'rules',
      mode,
      plan: plan ? 'generated' : null,
      hardware,
      settings: explained,
      packs: decisions.packs,
      facts: decisions.facts,
      stack,
    }
  }

  private async fromPlanFile(
    file: string,
    setting: string | undefined,
    timeoutMs: number,
  ): Promise<ExplainResult> {
    const plan = await readPlanFile(file, timeoutMs)
    if (setting === undefined) {
      const stack = plan.stack === undefined ? [] : explainStack(parseStackRef(plan.stack, `${file}: stack`))
      if (!this.jsonEnabled()) {
        this.log(renderTrace(`${plan.mode} plan from ${file}`, plan.trace))
        if (stack.length > 0) this.log(renderStack(stack))
      }
      return { source: 'plan', mode: plan.mode, plan: file, trace: plan.trace, stack }
    }
    return this.fromTrace(plan.mode, plan, setting, file)
  }

  /** The plan's trace entries for the setting: the search step, or the rule, that chose it. */
  private fromTrace(
    mode: Mode,
    plan: TrainingPlan,
    setting: string,
    source: string,
    limits: SettingExplanation | null = null,
  ): ExplainResult {
    const trace = traceFor(plan.trace, setting)
    if (trace.length === 0) {
      const known = [...new Set(plan.trace.map((entry) => entry.setting))]
      const near = closestName(setting, known)
      throw new RigfitError('usage', 'E_NOT_IN_TRACE', `the plan's trace says nothing about "${setting}"`, {
        suggestion: near ? `Did you mean "${near}"?` : `The trace covers: ${known.join(', ')}.`,
      })
    }
    if (!this.jsonEnabled()) {
      const title =
        source === 'generated' ? `${mode} plan for ${plan.hardware.summary}` : `${mode} plan from ${source}`
      this.log(renderTrace(title, trace))
      if (limits && (limits.cap || limits.forbids.length > 0))
        this.log(renderExplanation({ ...limits, docs: null, trace: [] }))
    }
    return { source: 'plan', mode, plan: source, trace, stack: [] }
  }
}

/** The packs' explanation of a setting, with the plan's value and trace in front of it. */
function explainFromPlan(
  decisions: Decisions,
  name: SettingName,
  plan: TrainingPlan | null,
  packs: LoadedPack[],
): ExplainedSetting {
  const rules = explainSetting(decisions, name)
  const trace = plan ? traceFor(plan.trace, name) : []
  const last = trace[trace.length - 1]
  const value = last ? (last.value as SettingExplanation['value']) : rules.value
  return { ...rules, value, trace, docs: docsOf(decisions.settings[name]?.provenance ?? null, packs) }
}

const isRuleSetting = (name: string): name is SettingName =>
  (SETTING_NAMES as readonly string[]).includes(name)

/** A setting name as the packs know it (`compile`, or its plan path `compile.enabled`), or one only plans have. */
function settingName(input: string): SettingName | PlanOnlySetting {
  const lower = input.toLowerCase()
  const byName = SETTING_NAMES.find((name) => name.toLowerCase() === lower)
  const byPath = SETTING_NAMES.find((name) => SETTING_PLAN_PATHS[name].toLowerCase() === lower)
  const planOnly = PLAN_ONLY_SETTINGS.find((name) => name.toLowerCase() === lower)
  const found = byName ?? byPath ?? planOnly
  if (found) return found
  const all = [...SETTING_NAMES, ...PLAN_ONLY_SETTINGS]
  const near = closestName(input, all)
  throw new RigfitError('usage', 'E_UNKNOWN_SETTING', `"${input}" is not a setting rigfit decides`, {
    suggestion: near
      ? `Did you mean "${near}"? Settings: ${all.join(', ')}.`
      : `Settings: ${all.join(', ')}.`,
  })
}

function docsOf(provenance: Provenance | null, packs: LoadedPack[]): string | null {
  if (!provenance) return null
  const pack = packs.find((p) => p.meta.name === provenance.pack)
  if (!pack) return null
  const path = join(pack.origin.path, 'docs', `${provenance.rule}.md`)
  return existsSync(path) ? displayPath(path) : null
}
