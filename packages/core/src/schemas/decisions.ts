import { z } from 'zod'
import { Mode } from './common.js'
import { Facts } from './facts.js'
import { PackLayer, SettingName } from './rule-pack.js'

const Value = z.union([z.string(), z.number(), z.boolean()])

/** Why a value was decided: the rule, its pack and layer, the facts its conditions read, and its reason. */
export const Provenance = z.object({
  rule: z.string(),
  pack: z.string(),
  layer: PackLayer,
  priority: z.number().int(),
  /** The facts the rule (and its pack's appliesTo) read, with the values they had. */
  facts: z.record(z.string(), z.unknown()),
  reason: z.string(),
})
export type Provenance = z.infer<typeof Provenance>

export const OverriddenValue = z.object({
  value: Value,
  provenance: Provenance,
  /** precedence: a rule ranked higher decided; forbidden: a forbid rule refused this value. */
  why: z.enum(['precedence', 'forbidden']),
  forbiddenBy: z.string().nullable(),
})
export type OverriddenValue = z.infer<typeof OverriddenValue>

export const SettingDecision = z.object({
  setting: SettingName,
  value: Value,
  /** set: a rule set it; forbid: every other value of a yes/no setting was forbidden. */
  source: z.enum(['set', 'forbid']),
  provenance: Provenance,
  /** The other rules that fired for this setting, in precedence order. */
  overridden: z.array(OverriddenValue),
  /** The value before a cap lowered it; null when no cap applied. */
  cappedFrom: z.number().nullable(),
})
export type SettingDecision = z.infer<typeof SettingDecision>

export const CapDecision = z.object({
  setting: SettingName,
  /** The lowest of all caps on the setting: every cap holds, so the lowest binds. */
  max: z.number(),
  provenance: Provenance,
  others: z.array(z.object({ max: z.number(), provenance: Provenance })),
})
export type CapDecision = z.infer<typeof CapDecision>

export const ForbidDecision = z.object({ setting: SettingName, value: Value, provenance: Provenance })
export type ForbidDecision = z.infer<typeof ForbidDecision>

export const AdviceDecision = z.object({
  id: z.string(),
  message: z.string(),
  expectedGain: z.string().nullable(),
  provenance: Provenance,
})
export type AdviceDecision = z.infer<typeof AdviceDecision>

/** What the rule packs decided for one profile, workload and mode. */
export const Decisions = z.object({
  mode: Mode,
  settings: z.partialRecord(SettingName, SettingDecision),
  caps: z.partialRecord(SettingName, CapDecision),
  forbids: z.array(ForbidDecision),
  warnings: z.array(AdviceDecision),
  suggestions: z.array(AdviceDecision),
  /** Every pack that took part, and whether its appliesTo held. */
  packs: z.array(z.object({ name: z.string(), version: z.string(), layer: PackLayer, applies: z.boolean() })),
  /** Rules whose conditions held, as pack/rule, in precedence order. */
  fired: z.array(z.string()),
  facts: Facts,
})
export type Decisions = z.infer<typeof Decisions>

/** Everything behind one setting: the deciding rule and the ones it overrode, caps and forbidden values. */
export const SettingExplanation = z.object({
  setting: SettingName,
  value: Value.nullable(),
  decision: SettingDecision.nullable(),
  cap: CapDecision.nullable(),
  forbids: z.array(ForbidDecision),
})
export type SettingExplanation = z.infer<typeof SettingExplanation>
