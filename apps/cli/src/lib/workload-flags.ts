import { Flags } from '@oclif/core'
import {
  parseCount,
  parseDurationHours,
  parseSizeBytes,
  RigfitError,
  WORKLOAD_SCHEMA_VERSION,
  type Workload,
} from '@rigfit/core'
import { resolveModel } from '@rigfit/core/node'
import { type PinFlagValues, pinFlags, pinsFromFlags } from './pin-flags.js'

/** Flags that describe what the user wants to train, shared by `analyze` and `plan`. */
export const workloadFlags = {
  model: Flags.string({
    description:
      'Fine-tune this model: a catalog id (rigfit estimate --help lists them) or a path to a Hugging Face config.json. Without it, plans pretrain a generated model from scratch.',
    helpGroup: 'WORKLOAD',
  }),
  method: Flags.string({
    description: 'Fine-tuning method; auto lets each mode pick the one that fits.',
    options: ['auto', 'full', 'lora', 'qlora'],
    default: 'auto',
    helpGroup: 'WORKLOAD',
  }),
  seq: Flags.integer({
    description: 'Sequence length (default: the mode chooses).',
    min: 16,
    helpGroup: 'WORKLOAD',
  }),
  'target-batch': Flags.integer({
    description:
      'Target effective batch in sequences, held constant across hardware (micro-batch x accumulation x GPUs x nodes).',
    min: 1,
    helpGroup: 'WORKLOAD',
  }),
  'time-budget': Flags.string({
    description: 'Wall-clock budget that bounds the token budget: 90m, 6h, 2d.',
    helpGroup: 'WORKLOAD',
  }),
  'dataset-size': Flags.string({
    description: 'Size of the training text, e.g. 20GB (fine-tuning: one epoch of it).',
    helpGroup: 'WORKLOAD',
  }),
  'dataset-tokens': Flags.string({
    description:
      'Tokens in the training data, counted: 200M, 20B (k, M, B, T). For pretraining, the tokens to train.',
    helpGroup: 'WORKLOAD',
    exclusive: ['dataset-size', 'examples'],
  }),
  examples: Flags.string({
    description: 'Examples in the training data (50k); with --tokens-per-example, the dataset in tokens.',
    helpGroup: 'WORKLOAD',
    dependsOn: ['tokens-per-example'],
    exclusive: ['dataset-size'],
  }),
  'tokens-per-example': Flags.string({
    description: 'Average tokens per example, prompt and answer together (1k).',
    helpGroup: 'WORKLOAD',
    dependsOn: ['examples'],
  }),
  epochs: Flags.string({
    description:
      'Passes over the dataset (default: 1 for a fine-tune; pretraining up to 4). Fractions allowed.',
    helpGroup: 'WORKLOAD',
  }),
  'frozen-model': Flags.string({
    description: 'A frozen model that shares the GPUs with the trained one (repeat for several).',
    multiple: true,
    helpGroup: 'WORKLOAD',
  }),
  nodes: Flags.integer({
    description: 'Machines of this kind the job runs on.',
    min: 1,
    default: 1,
    helpGroup: 'WORKLOAD',
  }),
  ...pinFlags,
}

export interface WorkloadFlagValues extends PinFlagValues {
  model?: string
  method: string
  seq?: number
  'target-batch'?: number
  'time-budget'?: string
  'dataset-size'?: string
  'dataset-tokens'?: string
  examples?: string
  'tokens-per-example'?: string
  epochs?: string
  'frozen-model'?: string[]
  nodes: number
}

/** Builds the Workload the planner works from, resolving model ids and config paths. */
export async function workloadFromFlags(flags: WorkloadFlagValues): Promise<Workload> {
  const model = flags.model ? await resolveModel(flags.model) : null
  if (!model && flags.method !== 'auto') {
    throw new RigfitError(
      'usage',
      'E_METHOD_WITHOUT_MODEL',
      `--method ${flags.method} needs a model to fine-tune.`,
      {
        suggestion: 'Add --model <catalog id | config.json>, or drop --method to pretrain from scratch.',
      },
    )
  }
  const frozenModels = await Promise.all((flags['frozen-model'] ?? []).map((id) => resolveModel(id)))
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: model ? 'finetune' : 'pretrain',
    model,
    method: flags.method as Workload['method'],
    frozenModels,
    datasetBytes: flags['dataset-size'] ? parseSizeBytes(flags['dataset-size']) : null,
    datasetTokens: countedDatasetTokens(flags),
    epochs: flags.epochs === undefined ? null : parseEpochs(flags.epochs),
    timeBudgetHours: flags['time-budget'] ? parseDurationHours(flags['time-budget']) : null,
    targetEffectiveBatch: flags['target-batch'] ?? null,
    seq: flags.seq ?? null,
    nodes: flags.nodes,
    pins: pinsFromFlags(flags),
  }
}

/** The dataset in tokens when the user counted it: --dataset-tokens, or --examples x --tokens-per-example. */
function countedDatasetTokens(flags: WorkloadFlagValues): number | null {
  if (flags['dataset-tokens'] !== undefined) return parseCount(flags['dataset-tokens'], '--dataset-tokens')
  if (flags.examples === undefined || flags['tokens-per-example'] === undefined) return null
  const tokens =
    parseCount(flags.examples, '--examples') * parseCount(flags['tokens-per-example'], '--tokens-per-example')
  if (tokens > 1e15) {
    throw new RigfitError(
      'usage',
      'E_BAD_COUNT',
      `--examples x --tokens-per-example is ${tokens} tokens, over 10^15.`,
      {
        suggestion: 'Check both counts: --examples 50k --tokens-per-example 1k is 50M tokens.',
      },
    )
  }
  return tokens
}

function parseEpochs(text: string): number {
  const epochs = Number(text.trim())
  if (!(Number.isFinite(epochs) && epochs > 0 && epochs <= 1000)) {
    throw new RigfitError(
      'usage',
      'E_BAD_EPOCHS',
      `--epochs "${text}" is not a number of passes from above 0 to 1000.`,
      {
        suggestion: 'Write how many times to go over the data: --epochs 3 (or 0.5 for half of it).',
      },
    )
  }
  return epochs
}
