import { z } from 'zod'
import { SpeedCalibration } from './calibration-record.js'
import {
  Attention,
  Backend,
  Bytes,
  DeviceKind,
  Mode,
  Offload,
  Optimizer,
  Precision,
  Quantization,
  Sharding,
} from './common.js'
import { MemoryBreakdown, Throughput } from './estimate.js'
import { ModelSpec } from './model-spec.js'
import { StackRefText } from './stack.js'
import { DatasetFile } from './workload.js'

export const TRAINING_PLAN_SCHEMA_VERSION = 1

export const CompileMode = z.enum(['default', 'reduce-overhead', 'max-autotune'])
export type CompileMode = z.infer<typeof CompileMode>

export const Settings = z.object({
  device: DeviceKind,
  gpus: z.number().int().nonnegative(),
  nodes: z.number().int().positive(),
  microBatch: z.number().int().positive(),
  gradAccum: z.number().int().positive(),
  /** microBatch x gradAccum x max(gpus, 1) x nodes, in sequences. */
  effectiveBatch: z.number().int().positive(),
  seq: z.number().int().positive(),
  precision: Precision,
  optimizer: Optimizer,
  fusedOptimizer: z.boolean(),
  gradCheckpointing: z.boolean(),
  attention: Attention,
  sharding: Sharding,
  offload: Offload,
  method: z.enum(['full', 'lora', 'qlora']),
  lora: z.object({ rank: z.number().int().positive(), targets: z.array(z.string()) }).nullable(),
  quant: Quantization,
  compile: z.object({ enabled: z.boolean(), mode: CompileMode }),
  tf32: z.boolean(),
  cudnnBenchmark: z.boolean(),
  backend: Backend,
  /**
   * Strategy between GPUs: single device, DDP, sharded (ZeRO or FSDP), models placed per GPU, or `zero-offload`:
   * one GPU per node running DeepSpeed ZeRO (stage from `sharding`) with optimizer/parameter offload.
   */
  strategy: z.enum(['single', 'ddp', 'zero', 'zero-offload', 'fsdp', 'model-split', 'cpu']),
  threads: z.number().int().positive(),
  dataloader: z.object({
    workers: z.number().int().nonnegative(),
    pinMemory: z.boolean(),
    prefetchFactor: z.number().int().positive().nullable(),
    persistentWorkers: z.boolean(),
  }),
  learningRate: z.number().positive(),
  /**
   * AdamW's moments, epsilon and weight decay, the warm-up and the gradient clipping, chosen by method and origin
   * (pretraining, full fine-tuning, adapters). Absent in plans written before the field existed.
   */
  optimization: z
    .object({
      beta1: z.number().min(0).lt(1),
      beta2: z.number().min(0).lt(1),
      epsilon: z.number().positive(),
      weightDecay: z.number().nonnegative(),
      warmupSteps: z.number().int().nonnegative(),
      gradClip: z.number().positive(),
    })
    .optional(),
})
export type Settings = z.infer<typeof Settings>
export type Optimization = NonNullable<Settings['optimization']>

export const TraceEntry = z.object({
  setting: z.string(),
  value: z.unknown(),
  rule: z.string(),
  pack: z.string(),
  layer: z.enum(['core', 'vendor', 'user', 'generator']),
  facts: z.record(z.string(), z.unknown()),
  reason: z.string(),
})
export type TraceEntry = z.infer<typeof TraceEntry>

export const Advice = z.object({
  id: z.string(),
  message: z.string(),
  source: z.string(),
  /** For suggestions: the expected gain, e.g. "+40% tokens/s" or "-30% memory". */
  expectedGain: z.string().nullable(),
})
export type Advice = z.infer<typeof Advice>

export const TrainingPlan = z.object({
  schemaVersion: z.literal(TRAINING_PLAN_SCHEMA_VERSION),
  rigfitVersion: z.string(),
  createdAt: z.string(),
  mode: Mode,
  /**
   * The stack that will run the plan (`NAME@VERSION`), which its estimate assumed: its logits upcast, adapter type,
   * loss chunking and CUDA context. Absent from plans written before stacks, which were estimated without one.
   */
  stack: StackRefText.optional(),
  hardware: z.object({
    summary: z.string(),
    gpuName: z.string().nullable(),
    gpus: z.number().int().nonnegative(),
    nodes: z.number().int().positive(),
    computeCapability: z.string().nullable(),
    deviceMemoryBytes: Bytes,
    hostMemoryBytes: Bytes,
    profileSource: z.string(),
  }),
  workload: z.object({
    kind: z.enum(['pretrain', 'finetune']),
    description: z.string(),
    /** The dataset file counted for this plan (`--dataset PATH`), when one was given. */
    dataset: DatasetFile.optional(),
  }),
  model: ModelSpec,
  params: z.object({ total: z.number().int().nonnegative(), trainable: z.number().int().nonnegative() }),
  settings: Settings,
  memory: z.object({
    perDevice: MemoryBreakdown,
    hostBytes: Bytes,
    capacityBytes: Bytes,
    budgetFraction: z.number().min(0).max(1),
    usedFraction: z.number().nonnegative(),
  }),
  throughput: Throughput,
  /**
   * How the speed used this machine's calibration store: the label ("measured on this machine" or "predicted"),
   * the model's own prediction, the correction factor and the records behind it. Absent when the store was not
   * read (`--no-calibration`, a plan made elsewhere, plans written before it existed).
   */
  calibration: SpeedCalibration.optional(),
  tokens: z.object({
    budget: z.number().int().nonnegative(),
    tokensPerParam: z.number().nonnegative(),
    chinchillaTokens: z.number().int().nonnegative(),
    timeBudgetTokens: z.number().int().nonnegative().nullable(),
    /** target: the tokens asked for with `--tokens`, in place of the Chinchilla ratio. */
    binding: z.enum(['chinchilla', 'target', 'time-budget', 'dataset']),
  }),
  time: z.object({ totalHours: z.number().nonnegative(), steps: z.number().int().nonnegative() }),
  power: z.object({
    watts: z.number().nonnegative(),
    tdpFraction: z.number().nonnegative(),
    energyKWh: z.number().nonnegative(),
    psuHeadroomWatts: z.number().nullable(),
  }),
  checkpoints: z.object({
    intervalMinutes: z.number().positive(),
    sizeBytes: Bytes,
    kept: z.number().int().positive(),
    diskNeededBytes: Bytes,
    diskFreeBytes: Bytes.nullable(),
    fitsOnDisk: z.boolean().nullable(),
  }),
  /**
   * What the run costs at a known hourly price (`--price-per-hour`, or an `--instance` preset's list price): the
   * price of one node, the currency, and price x nodes x total hours. Null when no price is known; absent in plans
   * written before the field existed.
   */
  cost: z
    .object({
      pricePerHour: z.number().nonnegative(),
      currency: z.literal('USD'),
      nodes: z.number().int().positive(),
      total: z.number().nonnegative(),
    })
    .nullable()
    .optional(),
  /** Where each model sits when frozen companion models share the GPUs; null for a single model. */
  placement: z
    .array(
      z.object({ device: z.number().int().nonnegative(), models: z.array(z.string()), frozenBytes: Bytes }),
    )
    .nullable()
    .optional(),
  warnings: z.array(Advice),
  suggestions: z.array(Advice),
  trace: z.array(TraceEntry),
})
export type TrainingPlan = z.infer<typeof TrainingPlan>
