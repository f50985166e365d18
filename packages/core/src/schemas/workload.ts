import { z } from 'zod'
import { Attention, Offload, Optimizer, Precision, Quantization, Sharding } from './common.js'
import { LoraTarget } from './estimate.js'
import { ModelSpec } from './model-spec.js'

export const WORKLOAD_SCHEMA_VERSION = 1

export const PeftMethod = z.enum(['auto', 'full', 'lora', 'qlora'])
export type PeftMethod = z.infer<typeof PeftMethod>

/**
 * Settings the user fixed on the command line (`plan --micro-batch 4 --grad-ckpt ...`): every mode keeps them,
 * or the plan fails naming the pin that cannot fit. Absent: the planner chooses.
 */
export const SettingPins = z.strictObject({
  microBatch: z.number().int().positive().max(1_000_000).optional(),
  gradAccum: z.number().int().positive().max(1_000_000).optional(),
  precision: Precision.optional(),
  optimizer: Optimizer.optional(),
  gradCheckpointing: z.boolean().optional(),
  attention: Attention.optional(),
  sharding: Sharding.optional(),
  offload: Offload.optional(),
  loraRank: z.number().int().min(1).max(65_536).optional(),
  loraTargets: z.array(LoraTarget).min(1).optional(),
  quant: Quantization.optional(),
})
export type SettingPins = z.infer<typeof SettingPins>

/** A local dataset file counted for the plan (`--dataset PATH`): what was read, and how its tokens were counted. */
export const DatasetFile = z.strictObject({
  path: z.string().min(1),
  format: z.enum(['jsonl', 'txt', 'parquet']),
  bytes: z.number().int().nonnegative(),
  examples: z.number().int().positive(),
  tokens: z.number().int().positive().max(1e15),
  /** Exact with the model's tokenizer.json, else the text's UTF-8 bytes at a documented ratio. */
  method: z.enum(['tokenizer', 'bytes-per-token']),
  tokenizer: z.string().nullable(),
})
export type DatasetFile = z.infer<typeof DatasetFile>

export const Workload = z.object({
  schemaVersion: z.literal(WORKLOAD_SCHEMA_VERSION),
  /** From-scratch pretraining of a generated model, or fine-tuning a given one. */
  kind: z.enum(['pretrain', 'finetune']),
  /**
   * The model to fine-tune, or to pretrain from scratch at a chosen size (`--params 1B`, or `--model config.json
   * --method pretrain`); absent for pretraining a size the planner chooses, where it generates shapes.
   */
  model: ModelSpec.nullable(),
  method: PeftMethod,
  /** Frozen companion models that share the GPUs (e.g. an encoder trained between two frozen LLMs). */
  frozenModels: z.array(ModelSpec),
  datasetBytes: z.number().int().nonnegative().nullable(),
  /** Tokens in the dataset when the user counted them (`--dataset-tokens`, `--examples` x `--tokens-per-example`);
   *  they win over `datasetBytes`, which is converted at a documented bytes-per-token ratio. */
  datasetTokens: z.number().int().positive().max(1e15).nullable().optional(),
  /** Average tokens per example of a fine-tune's data (`--tokens-per-example`, or a counted `--dataset`): its
   *  sequences are at least long enough to hold one, rather than cutting every example short. */
  tokensPerExample: z.number().positive().max(1e8).nullable().optional(),
  /** The file the dataset was counted from (`--dataset PATH`); its tokens are `datasetTokens`. */
  dataset: DatasetFile.nullable().optional(),
  /** Tokens to pretrain on (`--tokens 20B`): the target in place of the mode's tokens-per-parameter ratio. */
  targetTokens: z.number().int().positive().max(1e15).nullable().optional(),
  /** Passes over the dataset (`--epochs`): a fine-tune makes one by default, pretraining up to four. */
  epochs: z.number().positive().max(1000).nullable().optional(),
  timeBudgetHours: z.number().positive().nullable(),
  /** Effective batch in sequences: micro-batch x accumulation x GPUs x nodes. */
  targetEffectiveBatch: z.number().int().positive().nullable(),
  seq: z.number().int().positive().nullable(),
  nodes: z.number().int().positive(),
  /** Settings fixed by the user; the planner searches only the rest. */
  pins: SettingPins.optional(),
})
export type Workload = z.infer<typeof Workload>
