import { z } from 'zod'

export const RULE_PACK_SCHEMA_VERSION = 1

/** Facts a rule may read. Closed: a typo in a pack is an error, not a silently false condition. */
export const FACT_NAMES = [
  'mode',
  'gpuCount',
  'gpuVendor',
  'gpuName',
  'gpuFamily',
  'gpuArch',
  'computeCapability',
  'computeCapabilityMajor',
  'gfxTarget',
  'metalFamily',
  'vramGiB',
  'totalVramGiB',
  'tensorCores',
  'bf16',
  'fp16',
  'tf32',
  'fp8',
  'unifiedMemory',
  'integratedGpu',
  'migEnabled',
  'interconnect',
  'driverVersionMajor',
  'cudaVersion',
  'rocmVersion',
  'cpuVendor',
  'cpuArch',
  'physicalCores',
  'logicalCores',
  'usableCores',
  'numaNodes',
  'avx2',
  'avx512',
  'amx',
  'avx512bf16',
  'neon',
  'ramGiB',
  'usableRamGiB',
  'onBattery',
  'batteryPercent',
  'throttlingRisk',
  'gpuTempC',
  'workloadKind',
  'modelParamsB',
  'seq',
  'nodes',
  'platform',
] as const
export const FactName = z.enum(FACT_NAMES)
export type FactName = z.infer<typeof FactName>

export const OPERATORS = [
  'equal',
  'notEqual',
  'lessThan',
  'lessThanInclusive',
  'greaterThan',
  'greaterThanInclusive',
  'in',
  'notIn',
  'contains',
  'doesNotContain',
  'startsWith',
  'matches',
] as const
export const Operator = z.enum(OPERATORS)

const Scalar = z.union([z.string().max(200), z.number(), z.boolean(), z.null()])
const FactReference = z.strictObject({ fact: FactName })

export const Condition = z.strictObject({
  fact: FactName,
  operator: Operator,
  value: z.union([Scalar, z.array(Scalar).max(100), FactReference]),
})
export type Condition = z.infer<typeof Condition>

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

export const TopLevelConditions = z.union([
  z.strictObject({ all: z.array(ConditionTree).max(50) }),
  z.strictObject({ any: z.array(ConditionTree).max(50) }),
  z.strictObject({ not: ConditionTree }),
])

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
export const SettingName = z.enum(Object.keys(SETTING_VALUES) as [SettingName, ...SettingName[]])

const Reason = z.string().min(1).max(500)
const MessageId = z.string().regex(/^[a-z0-9][a-z0-9-]*$/).max(80)

export const RuleEvent = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('set'),
    params: z.strictObject({ setting: SettingName, value: z.union([z.string(), z.number(), z.boolean()]), reason: Reason }),
  }),
  z.strictObject({
    type: z.literal('cap'),
    params: z.strictObject({ setting: SettingName, max: z.number(), reason: Reason }),
  }),
  z.strictObject({
    type: z.literal('forbid'),
    params: z.strictObject({ setting: SettingName, value: z.union([z.string(), z.number(), z.boolean()]), reason: Reason }),
  }),
  z.strictObject({
    type: z.literal('warn'),
    params: z.strictObject({ id: MessageId, message: Reason }),
  }),
  z.strictObject({
    type: z.literal('suggest'),
    params: z.strictObject({ id: MessageId, message: Reason, expectedGain: z.string().max(80).optional() }),
  }),
])
export type RuleEvent = z.infer<typeof RuleEvent>

export const RuleId = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'rule ids are kebab-case: a-z, 0-9 and -').max(80)

export const Rule = z.strictObject({
  id: RuleId,
  description: z.string().min(1).max(500),
  priority: z.number().int().min(1).max(100).default(50),
  conditions: TopLevelConditions,
  event: RuleEvent,
})
export type Rule = z.infer<typeof Rule>

export const PackLayer = z.enum(['core', 'vendor', 'user'])
export type PackLayer = z.infer<typeof PackLayer>

export const RulePack = z.strictObject({
  schemaVersion: z.literal(RULE_PACK_SCHEMA_VERSION),
  meta: z.strictObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/).max(60),
    version: z.string().regex(/^\d+\.\d+\.\d+/),
    description: z.string().max(500),
  }),
  layer: PackLayer,
  /** When the pack is in force at all, e.g. only for NVIDIA GPUs with compute capability 8.9. */
  appliesTo: TopLevelConditions.nullable(),
  rules: z.array(Rule).max(1000),
})
export type RulePack = z.infer<typeof RulePack>
