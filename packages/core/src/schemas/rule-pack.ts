import { z } from 'zod'
import { oneLineText } from './common.js'
import { TopLevelConditions } from './rule-conditions.js'
import { RuleEvent } from './rule-events.js'

// A rule pack's schema by concept: conditions, the settings a rule may decide, the events it may fire, and
// what the loader reports; this file holds the rule and the pack itself, and re-exports the rest.
export * from './pack-loading.js'
export * from './rule-conditions.js'
export * from './rule-events.js'
export * from './rule-settings.js'

export const RULE_PACK_SCHEMA_VERSION = 1

export const RuleId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'rule ids are kebab-case: a-z, 0-9 and -')
  .max(80)

/** One rule: json-rules-engine data. In a pack directory each rule is its own file, rules/<id>.json. */
export const Rule = z.strictObject({
  $schema: z.string().max(500).optional(),
  id: RuleId,
  description: oneLineText(500),
  /** Higher wins when two rules decide the same setting (then layer: user > vendor > core, then rule id). */
  priority: z.number().int().min(1).max(100).default(50),
  conditions: TopLevelConditions,
  event: RuleEvent,
})
export type Rule = z.infer<typeof Rule>

/** Where a pack sits in precedence: core defaults < vendor plugins < user packs. Set by where it was loaded from. */
export const PackLayer = z.enum(['core', 'vendor', 'user'])
export type PackLayer = z.infer<typeof PackLayer>
export const LAYER_RANK: Record<PackLayer, number> = { core: 0, vendor: 1, user: 2 }

export const PackName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'pack names are kebab-case: a-z, 0-9 and -')
  .max(60)

export const PackMeta = z.strictObject({
  name: PackName,
  version: z.string().regex(/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/, 'a semantic version such as 1.0.0'),
  description: oneLineText(500),
  homepage: z.string().url().max(300).optional(),
})
export type PackMeta = z.infer<typeof PackMeta>

/** pack.json of a pack directory: everything but the rules, which live in rules/<id>.json. */
export const PackManifest = z.strictObject({
  $schema: z.string().max(500).optional(),
  schemaVersion: z.literal(RULE_PACK_SCHEMA_VERSION),
  meta: PackMeta,
  /** When the pack is in force at all, e.g. only for GPUs of its family; null: always. */
  appliesTo: TopLevelConditions.nullable(),
})
export type PackManifest = z.infer<typeof PackManifest>

export const MAX_RULES_PER_PACK = 1000

/** A whole pack in one JSON file (the single-file form of a community pack, and the loaded form of any pack). */
export const RulePack = PackManifest.extend({
  rules: z
    .array(Rule)
    .max(MAX_RULES_PER_PACK)
    .superRefine((rules, ctx) => {
      const seen = new Map<string, number>()
      rules.forEach((rule, index) => {
        const first = seen.get(rule.id)
        if (first !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [index, 'id'],
            message: `duplicate rule id "${rule.id}" (also rules[${first}])`,
          })
        } else seen.set(rule.id, index)
      })
    }),
})
export type RulePack = z.infer<typeof RulePack>
