import type { Decisions, Provenance } from '../schemas/decisions.js'
import type { SettingName } from '../schemas/rule-pack.js'
import type { TraceEntry } from '../schemas/training-plan.js'
import type { PinTrace } from './pins.js'

type Value = string | number | boolean

/** Reads the rules engine's decisions for the generator, and records the trace of every setting. */
export class DecisionReader {
  readonly trace: TraceEntry[] = []

  /**
   * @param pins settings the user fixed on the command line, by trace name: they win over every rule and are
   *   traced to their flags.
   */
  constructor(
    private readonly decisions: Decisions,
    private readonly pins: Readonly<Record<string, PinTrace>> = {},
  ) {}

  /** Whether the user pinned this setting. */
  isPinned(setting: string): boolean {
    return this.pins[setting] !== undefined
  }

  /** The value a rule set, if any. */
  value<T extends Value>(setting: SettingName): T | undefined {
    return this.decisions.settings[setting]?.value as T | undefined
  }

  cap(setting: SettingName): number | undefined {
    return this.decisions.caps[setting]?.max
  }

  forbidden(setting: SettingName, value: Value): boolean {
    return this.decisions.forbids.some((forbid) => forbid.setting === setting && forbid.value === value)
  }

  /** Values of `options` that no rule forbids, in order. */
  allowed<T extends Value>(setting: SettingName, options: readonly T[]): T[] {
    return options.filter((option) => !this.forbidden(setting, option))
  }

  /** The decided value when a rule set it and no rule forbids it, else `fallback`; records nothing. */
  preferred<T extends Value>(setting: SettingName, fallback: T): T {
    const decided = this.decisions.settings[setting]?.value as T | undefined
    return decided !== undefined && !this.forbidden(setting, decided) ? decided : fallback
  }

  /**
   * The decided value when a rule set it (and it is allowed), else `fallback`; records the trace either way:
   * the deciding rule, or the generator with its reason.
   */
  resolve<T extends Value>(
    setting: SettingName,
    fallback: T,
    fallbackReason: string,
    facts: Record<string, unknown> = {},
  ): T {
    const decision = this.decisions.settings[setting]
    const pin = this.pins[setting]
    if (pin) {
      this.recordPinned(setting, pin.value)
      return pin.value as T
    }
    if (decision && !this.forbidden(setting, decision.value)) {
      this.recordRule(setting, decision.value, decision.provenance)
      return decision.value as T
    }
    this.recordGenerator(setting, fallback, fallbackReason, facts)
    return fallback
  }

  /**
   * Records a value the generator settled on: the deciding rule when it set this very value, else the generator
   * with its reason, naming the rule whose preference it departs from.
   */
  settle(setting: string, value: unknown, reason: string, facts: Record<string, unknown> = {}): void {
    const decision = this.decisions.settings[setting as SettingName]
    if (this.isPinned(setting)) this.recordPinned(setting, value)
    else if (decision && decision.value === value) this.recordRule(setting, value, decision.provenance)
    else if (decision) {
      const rule = `${decision.provenance.pack}/${decision.provenance.rule}`
      this.recordGenerator(
        setting,
        value,
        `${rule} prefers ${JSON.stringify(decision.value)}; ${reason}`,
        facts,
      )
    } else this.recordGenerator(setting, value, reason, facts)
  }

  /** Settings whose rule-preferred value differs from `chosen`, as `setting (pack/rule prefers value)`. */
  departures(chosen: Partial<Record<SettingName, Value>>): string[] {
    const out: string[] = []
    for (const [setting, value] of Object.entries(chosen) as [SettingName, Value][]) {
      const decision = this.decisions.settings[setting]
      if (decision && decision.value !== value && !this.isPinned(setting)) {
        const rule = `${decision.provenance.pack}/${decision.provenance.rule}`
        out.push(`${setting} (${rule} prefers ${JSON.stringify(decision.value)})`)
      }
    }
    return out
  }

  /** A pinned value: the user's flags decided it, whatever the packs prefer. */
  private recordPinned(setting: string, value: unknown): void {
    const text = this.pins[setting]?.text ?? setting
    this.trace.push({
      setting,
      value,
      rule: text,
      pack: 'command-line',
      layer: 'user',
      facts: {},
      reason: `pinned on the command line (${text})`,
    })
  }

  recordRule(setting: string, value: unknown, provenance: Provenance): void {
    this.trace.push({
      setting,
      value,
      rule: provenance.rule,
      pack: provenance.pack,
      layer: provenance.layer,
      facts: provenance.facts,
      reason: provenance.reason,
    })
  }

  recordGenerator(
    setting: string,
    value: unknown,
    reason: string,
    facts: Record<string, unknown> = {},
  ): void {
    const cap = this.decisions.caps[setting as SettingName]
    const capNote = cap ? ` (capped at ${cap.max} by ${cap.provenance.pack}/${cap.provenance.rule})` : ''
    this.trace.push({
      setting,
      value,
      rule: 'search',
      pack: 'generator',
      layer: 'generator',
      facts,
      reason: reason + capNote,
    })
  }
}
