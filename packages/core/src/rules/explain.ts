import type { Decisions, SettingExplanation } from '../schemas/decisions.js'
import { SETTING_NAMES, SETTING_PLAN_PATHS, type SettingName } from '../schemas/rule-pack.js'
import type { TraceEntry } from '../schemas/training-plan.js'

/** What the packs said about one setting. */
export function explainSetting(decisions: Decisions, setting: SettingName): SettingExplanation {
  const decision = decisions.settings[setting] ?? null
  return {
    setting,
    value: decision?.value ?? null,
    decision,
    cap: decisions.caps[setting] ?? null,
    forbids: decisions.forbids.filter((forbid) => forbid.setting === setting),
  }
}

/** The settings the packs said anything about (set, capped or forbade), in name order. */
export function explainedSettings(decisions: Decisions): SettingName[] {
  return SETTING_NAMES.filter(
    (name) =>
      decisions.settings[name] || decisions.caps[name] || decisions.forbids.some((f) => f.setting === name),
  ).sort()
}

/** A plan trace entry for every setting the packs decided, for TrainingPlan.trace. */
export function decisionsToTrace(decisions: Decisions): TraceEntry[] {
  const entries: TraceEntry[] = []
  for (const name of SETTING_NAMES) {
    const decision = decisions.settings[name]
    if (!decision) continue
    const { provenance } = decision
    const capped =
      decision.cappedFrom !== null
        ? ` (lowered from ${decision.cappedFrom} by ${decisions.caps[name]?.provenance.rule})`
        : ''
    entries.push({
      setting: name,
      value: decision.value,
      rule: provenance.rule,
      pack: provenance.pack,
      layer: provenance.layer,
      facts: provenance.facts,
      reason: `${provenance.reason}${capped}`,
    })
  }
  return entries
}

/**
 * The trace entries of a plan for one setting, by rule setting name ("compile"), plan path ("compile.enabled")
 * or any name the generator used.
 */
export function traceFor(trace: TraceEntry[], setting: string): TraceEntry[] {
  const wanted = setting.toLowerCase()
  const aliases = new Set([wanted])
  for (const name of SETTING_NAMES) {
    const path = SETTING_PLAN_PATHS[name].toLowerCase()
    if (name.toLowerCase() === wanted) aliases.add(path)
    if (path === wanted) aliases.add(name.toLowerCase())
  }
  return trace.filter((entry) => aliases.has(entry.setting.toLowerCase()))
}
