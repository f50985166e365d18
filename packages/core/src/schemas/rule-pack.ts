import { z } from 'zod'
import { acceptsValue, FactName } from './facts.js'

export const RULE_PACK_SCHEMA_VERSION = 1

/**
 * Operators a condition may use: json-rules-engine's comparison operators plus `startsWith`, which rigfit's
 * engine defines. Packs cannot add operators (no code runs from a pack), and there is no regular-expression
 * operator, so a community pack cannot stall the engine with a pathological pattern.
 */
export const OPERATORS = [
  'equal',
  'notEqual',
  'lessThan',
  'lessThanInclusive',
  'greaterThan',
  'greaterThanInclusive',
  'in',
  'notIn',
  'startsWith',
] as const
export const Operator = z.enum(OPERATORS)
export type Operator = z.infer<typeof Operator>

const NUMERIC_OPERATORS: ReadonlySet<Operator> = new Set([
  'lessThan',
  'lessThanInclusive',
  'greaterThan',
  'greaterThanInclusive',
])

/** What kind of value a fact holds; decides which operators and settings it can meet. */
export type ValueKind = 'number' | 'boolean' | 'string' | 'enum'

const factKinds = new Map<FactName, ValueKind>()

export function factKind(name: FactName): ValueKind {
  let kind = factKinds.get(name)
  if (kind === undefined) {
    if (acceptsValue(name, 1.5) || acceptsValue(name, 1)) kind = 'number'
    else if (acceptsValue(name, true)) kind = 'boolean'
    else if (acceptsValue(name, '\u0000any string')) kind = 'string'
    else kind = 'enum'
    factKinds.set(name, kind)
  }
  return kind
}

const Scalar = z.union([z.string().max(200), z.number(), z.boolean(), z.null()])
export const FactReference = z.strictObject({ fact: FactName })
export type FactReference = z.infer<typeof FactReference>

export const Condition = z
  .strictObject({
    fact: FactName,
    operator: Operator,
    value: z.union([Scalar, z.array(Scalar).min(1).max(100), FactReference]),
  })
  .superRefine((condition, ctx) => {
    const { fact, operator, value } = condition
    const kind = factKind(fact)
    const isReference = typeof value === 'object' && value !== null && !Array.isArray(value)
    if (isReference) {
      const other = factKind(value.fact)
      const comparable =
        other === kind ||
        (kind !== 'number' && kind !== 'boolean' && other !== 'number' && other !== 'boolean')
      if (!comparable || operator === 'in' || operator === 'notIn' || operator === 'startsWith') {
        ctx.addIssue({
          code: 'custom',
          path: ['value'],
          message: `fact "${fact}" (${kind}) cannot be compared with fact "${value.fact}" (${other}) by "${operator}"`,
        })
      }
      return
    }
    if (NUMERIC_OPERATORS.has(operator)) {
      if (kind !== 'number') {
        ctx.addIssue({
          code: 'custom',
          path: ['operator'],
          message: `"${operator}" needs a numeric fact; "${fact}" is ${kind}`,
        })
      } else if (typeof value !== 'number') {
        ctx.addIssue({
          code: 'custom',
          path: ['value'],
          message: `"${operator}" compares with a number, got ${JSON.stringify(value)}`,
        })
      }
      return
    }
    if (operator === 'in' || operator === 'notIn') {
      if (!Array.isArray(value)) {
        ctx.addIssue({ code: 'custom', path: ['value'], message: `"${operator}" needs a list of values` })
        return
      }
      value.forEach((item, index) => {
        if (!acceptsValue(fact, item)) {
          ctx.addIssue({ code: 'custom', path: ['value', index], message: valueMismatch(fact, item) })
        }
      })
      return
    }
    if (Array.isArray(value)) {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `"${operator}" compares with one value, not a list (use "in")`,
      })
      return
    }
    if (operator === 'startsWith') {
      if (kind !== 'string' && kind !== 'enum') {
        ctx.addIssue({
          code: 'custom',
          path: ['operator'],
          message: `"startsWith" needs a text fact; "${fact}" is ${kind}`,
        })
      } else if (typeof value !== 'string' || value.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['value'], message: '"startsWith" needs a non-empty string' })
      }
      return
    }
    if (!acceptsValue(fact, value))
      ctx.addIssue({ code: 'custom', path: ['value'], message: valueMismatch(fact, value) })
  })
export type Condition = z.infer<typeof Condition>

function valueMismatch(fact: FactName, value: unknown): string {
  return `${JSON.stringify(value)} is not a value fact "${fact}" can take (${factKind(fact)})`
}

export type ConditionTree =
  | Condition
  | { all: ConditionTree[] }
  | { any: ConditionTree[] }
  | { not: ConditionTree }

export const ConditionTree: z.ZodType<ConditionTree> = z.lazy(() =>
  z.union([
    Condition,
    z.strictObject({ all: z.array(ConditionTree).max(50) }),
    z.strictObject({ any: z.array(ConditionTree).max(50) }),
    z.strictObject({ not: ConditionTree }),
  ]),
)

/** `all: []` always holds: a rule of a pack whose appliesTo already says everything it needs. */
export const TopLevelConditions = z.union([
  z.strictObject({ all: z.array(ConditionTree).max(50) }),
  z.strictObject({ any: z.array(ConditionTree).min(1).max(50) }),
  z.strictObject({ not: ConditionTree }),
])
export type TopLevelConditions = z.infer<typeof TopLevelConditions>

/** Settings a rule may decide. Closed, with each setting's value type. */
export const SETTING_VALUES = {
  precision: z.enum(['fp32', 'fp16-mixed', 'bf16-mixed', 'fp16-true', 'bf16-true']),
  tf32: z.boolean(),
  compile: z.boolean(),
  compileMode: z.enum(['default', 'reduce-overhead', 'max-autotune']),
  gradCheckpointing: z.boolean(),
  dataloaderWorkers: z.number().int().min(0).max(256),
  pinMemory: z.boolean(),
  prefetchFactor: z.number().int().min(1).max(64),
  persistentWorkers: z.boolean(),
  backend: z.enum(['nccl', 'rccl', 'gloo', 'mps', 'none']),
  device: z.enum(['cuda', 'rocm', 'mps', 'xpu', 'cpu']),
  attention: z.enum(['eager', 'sdpa', 'flash']),
  optimizer: z.enum(['adamw', 'adamw-8bit', 'adafactor', 'sgd', 'sgd-momentum']),
  fusedOptimizer: z.boolean(),
  cudnnBenchmark: z.boolean(),
  threads: z.number().int().min(1).max(1024),
  microBatch: z.number().int().min(1).max(65536),
  seq: z.number().int().min(16).max(1048576),
  sharding: z.enum(['none', 'zero1', 'zero2', 'zero3', 'fsdp']),
  offload: z.enum(['none', 'optimizer', 'all']),
  quant: z.enum(['none', 'int8', 'nf4']),
  method: z.enum(['full', 'lora', 'qlora']),
  memoryFraction: z.number().min(0.05).max(1),
  powerFraction: z.number().min(0.05).max(1),
  gpus: z.number().int().min(1).max(1024),
} as const
export type SettingName = keyof typeof SETTING_VALUES
export const SETTING_NAMES = Object.keys(SETTING_VALUES) as SettingName[]
export const SettingName = z.enum(SETTING_NAMES as [SettingName, ...SettingName[]])
export type SettingValue = string | number | boolean

/** Where each setting lives in a TrainingPlan's `settings` (for the plan trace and `rigfit explain`). */
export const SETTING_PLAN_PATHS: Record<SettingName, string> = {
  precision: 'precision',
  tf32: 'tf32',
  compile: 'compile.enabled',
  compileMode: 'compile.mode',
  gradCheckpointing: 'gradCheckpointing',
  dataloaderWorkers: 'dataloader.workers',
  pinMemory: 'dataloader.pinMemory',
  prefetchFactor: 'dataloader.prefetchFactor',
  persistentWorkers: 'dataloader.persistentWorkers',
  backend: 'backend',
  device: 'device',
  attention: 'attention',
  optimizer: 'optimizer',
  fusedOptimizer: 'fusedOptimizer',
  cudnnBenchmark: 'cudnnBenchmark',
  threads: 'threads',
  microBatch: 'microBatch',
  seq: 'seq',
  sharding: 'sharding',
  offload: 'offload',
  quant: 'quant',
  method: 'method',
  memoryFraction: 'memoryFraction',
  powerFraction: 'powerFraction',
  gpus: 'gpus',
}

export function settingKind(setting: SettingName): ValueKind {
  const schema = SETTING_VALUES[setting]
  if (schema.safeParse(1).success || schema.safeParse(0.5).success) return 'number'
  if (schema.safeParse(true).success) return 'boolean'
  return 'enum'
}

const Reason = z.string().min(1).max(500)
export const MessageId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'message ids are kebab-case: a-z, 0-9 and -')
  .max(80)
const EventValue = z.union([z.string().max(200), z.number(), z.boolean(), FactReference])

function checkSettingValue(
  setting: SettingName,
  value: SettingValue | FactReference,
  ctx: z.RefinementCtx,
): void {
  if (typeof value === 'object') {
    const kind = factKind(value.fact)
    if (settingKind(setting) !== 'number' || kind !== 'number') {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `only numeric settings take a fact's value; "${setting}" is ${settingKind(setting)} and fact "${value.fact}" is ${kind}`,
      })
    }
    return
  }
  const parsed = SETTING_VALUES[setting].safeParse(value)
  if (!parsed.success) {
    ctx.addIssue({
      code: 'custom',
      path: ['value'],
      message: `${JSON.stringify(value)} is not a valid value for setting "${setting}": ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    })
  }
}

export const SetEvent = z.strictObject({
  type: z.literal('set'),
  params: z
    .strictObject({ setting: SettingName, value: EventValue, reason: Reason })
    .superRefine((params, ctx) => checkSettingValue(params.setting, params.value, ctx)),
})
export const CapEvent = z.strictObject({
  type: z.literal('cap'),
  params: z
    .strictObject({ setting: SettingName, max: z.union([z.number(), FactReference]), reason: Reason })
    .superRefine((params, ctx) => {
      if (settingKind(params.setting) !== 'number') {
        ctx.addIssue({
          code: 'custom',
          path: ['setting'],
          message: `only numeric settings can be capped; "${params.setting}" is not`,
        })
        return
      }
      if (typeof params.max === 'object') {
        if (factKind(params.max.fact) !== 'number') {
          ctx.addIssue({ code: 'custom', path: ['max'], message: `fact "${params.max.fact}" is not numeric` })
        }
      } else if (!Number.isFinite(params.max)) {
        ctx.addIssue({ code: 'custom', path: ['max'], message: 'a cap must be a finite number' })
      }
    }),
})
export const ForbidEvent = z.strictObject({
  type: z.literal('forbid'),
  params: z
    .strictObject({
      setting: SettingName,
      value: z.union([z.string().max(200), z.number(), z.boolean()]),
      reason: Reason,
    })
    .superRefine((params, ctx) => checkSettingValue(params.setting, params.value, ctx)),
})
export const WarnEvent = z.strictObject({
  type: z.literal('warn'),
  params: z.strictObject({ id: MessageId, message: Reason }),
})
export const SuggestEvent = z.strictObject({
  type: z.literal('suggest'),
  params: z.strictObject({
    id: MessageId,
    message: Reason,
    /** The expected gain in plain words: "+40% tokens/s", "-30% memory". */
    expectedGain: z.string().min(1).max(80).optional(),
  }),
})

/** The closed event vocabulary: set a setting, cap it, forbid a value, warn, suggest. */
export const RuleEvent = z.discriminatedUnion('type', [
  SetEvent,
  CapEvent,
  ForbidEvent,
  WarnEvent,
  SuggestEvent,
])
export type RuleEvent = z.infer<typeof RuleEvent>
export type RuleEventType = RuleEvent['type']

export const RuleId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'rule ids are kebab-case: a-z, 0-9 and -')
  .max(80)

/** One rule: json-rules-engine data. In a pack directory each rule is its own file, rules/<id>.json. */
export const Rule = z.strictObject({
  $schema: z.string().max(500).optional(),
  id: RuleId,
  description: z.string().min(1).max(500),
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
  description: z.string().min(1).max(500),
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

/** Where a loaded pack came from. */
export const PackOrigin = z.object({
  kind: z.enum(['core', 'plugin', 'user']),
  /** The pack directory or single file. */
  path: z.string(),
  /** The oclif plugin that contributed it. */
  plugin: z.string().nullable(),
})
export type PackOrigin = z.infer<typeof PackOrigin>

/** A problem found while loading packs: which file, which rule, where in the JSON, and what. */
export const PackProblem = z.object({
  code: z.enum([
    'E_PACK_IO',
    'E_PACK_TOO_LARGE',
    'E_PACK_JSON',
    'E_PACK_FORBIDDEN_KEY',
    'E_PACK_TOO_DEEP',
    'E_PACK_SCHEMA',
    'E_PACK_RULE_FILE',
    'E_PACK_DUPLICATE',
    'E_PACK_PLUGIN',
    'E_PACK_CATALOG',
  ]),
  pack: z.string().nullable(),
  file: z.string(),
  ruleId: z.string().nullable(),
  /** JSON path inside the file, `$` for the whole document. */
  path: z.string(),
  message: z.string(),
})
export type PackProblem = z.infer<typeof PackProblem>
