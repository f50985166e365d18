import { Flags } from '@oclif/core'
import {
  generateModelShape,
  parseCount,
  parseDurationHours,
  parseSizeBytes,
  RigfitError,
  WORKLOAD_SCHEMA_VERSION,
  type Workload,
} from '@rigfit/core'
import {
  DEFAULT_HUB_TIMEOUT_MS,
  type HubOptions,
  modelTokenizer,
  resolveModelArg,
} from './hub/resolve-model-arg.js'
import { inputTimeoutFlags } from './input-timeout.js'
import { isConfigOnly } from './model-weights-origin.js'
import { type PinFlagValues, pinFlags, pinsFromFlags } from './pin-flags.js'

/** Flags that describe what the user wants to train, shared by `analyze` and `plan`. */
export const workloadFlags = {
  model: Flags.string({
    description:
      'Fine-tune this model: a Hugging Face Hub id (Qwen/Qwen2.5-7B-Instruct, org/name@revision), a local model folder or config.json, or a catalog id (rigfit estimate --list-models). With --method pretrain: train that architecture from scratch. Without it, plans pretrain a generated model from scratch.',
    helpGroup: 'WORKLOAD',
    exclusive: ['params'],
  }),
  ...inputTimeoutFlags,
  method: Flags.string({
    description:
      'Fine-tuning method, auto letting each mode pick the one that fits; pretrain trains --model from scratch (as auto does for a config without weights).',
    options: ['auto', 'full', 'lora', 'qlora', 'pretrain'],
    default: 'auto',
    helpGroup: 'WORKLOAD',
  }),
  params: Flags.string({
    description:
      'Pretrain a model of this size from scratch: 125M, 1B, 7B (a Llama-layout shape is generated and printed).',
    helpGroup: 'WORKLOAD',
  }),
  tokens: Flags.string({
    description:
      'Pretraining: tokens to train on (20B), in place of the Chinchilla ratio; Chinchilla and the time budget are still reported.',
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
  dataset: Flags.string({
    description:
      'A local training file (.jsonl, .txt, .parquet) whose examples and tokens are counted: with --tokenizer or the tokenizer.json of --model (beside its config.json, in its folder, or from the Hub), else at 4 bytes of text per token.',
    helpGroup: 'WORKLOAD',
    exclusive: ['dataset-size', 'dataset-tokens', 'examples'],
  }),
  tokenizer: Flags.string({
    description: "The model's Hugging Face tokenizer.json (or its folder), to count --dataset exactly.",
    helpGroup: 'WORKLOAD',
    dependsOn: ['dataset'],
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

/** Where Hub models are cached and how long to wait for the Hub: rigfit's cache folder and `--timeout`. */
export function hubOptions(cacheDir: string, timeoutSeconds: number | undefined): HubOptions {
  return { cacheDir, timeoutMs: (timeoutSeconds ?? DEFAULT_HUB_TIMEOUT_MS / 1000) * 1000 }
}

export interface WorkloadFlagValues extends PinFlagValues {
  model?: string
  timeout?: number
  method: string
  params?: string
  tokens?: string
  seq?: number
  'target-batch'?: number
  'time-budget'?: string
  'dataset-size'?: string
  'dataset-tokens'?: string
  dataset?: string
  tokenizer?: string
  examples?: string
  'tokens-per-example'?: string
  epochs?: string
  'frozen-model'?: string[]
  nodes: number
}

/**
 * Builds the Workload the planner works from, resolving model ids, Hub ids, folders and config paths; `cacheDir` is
 * rigfit's cache folder (Hub configs are kept there).
 */
export async function workloadFromFlags(flags: WorkloadFlagValues, cacheDir: string): Promise<Workload> {
  const hub = hubOptions(cacheDir, flags.timeout)
  const resolved = flags.model ? await resolveModelArg(flags.model, hub) : null
  // A model given only as a config (no trained weights) starts from random weights: that is pretraining.
  const configOnly =
    resolved !== null &&
    flags.model !== undefined &&
    flags.method === 'auto' &&
    isConfigOnly(resolved, flags.model)
  const pretrain =
    flags.method === 'pretrain' || flags.params !== undefined || flags.model === undefined || configOnly
  const model = resolved ? resolved.spec : flags.params !== undefined ? generatedModel(flags.params) : null
  if (flags.params !== undefined && flags.method !== 'auto' && flags.method !== 'pretrain') {
    throw new RigfitError(
      'usage',
      'E_METHOD_WITHOUT_MODEL',
      `--params pretrains a new model from scratch; --method ${flags.method} fine-tunes an existing one.`,
      {
        suggestion:
          'Drop --method, or fine-tune with --model <Hub id | folder | config.json | catalog id> instead of --params.',
      },
    )
  }
  if (flags.tokens !== undefined && !pretrain) {
    throw new RigfitError('usage', 'E_TOKENS_FINETUNE', '--tokens sets what a pretraining run trains on.', {
      suggestion:
        'A fine-tune trains its data: give it with --dataset-tokens, --examples N --tokens-per-example N, and --epochs.',
    })
  }
  if (!model && flags.method !== 'auto' && flags.method !== 'pretrain') {
    throw new RigfitError(
      'usage',
      'E_METHOD_WITHOUT_MODEL',
      `--method ${flags.method} needs a model to fine-tune.`,
      {
        suggestion:
          'Add --model <Hub id | folder | config.json | catalog id>, or drop --method to pretrain from scratch.',
      },
    )
  }
  const frozenModels = await Promise.all(
    (flags['frozen-model'] ?? []).map(async (id) => (await resolveModelArg(id, hub)).spec),
  )
  const tokenizer =
    flags.dataset === undefined || flags.tokenizer !== undefined || resolved === null
      ? flags.tokenizer
      : ((await modelTokenizer(resolved, hub)) ?? undefined)
  const dataset =
    flags.dataset === undefined
      ? null
      : // The dataset readers load only when a plan counts a dataset.
        await (await import('./dataset-file.js')).countDatasetFile(flags.dataset, {
          tokenizer,
          model: flags.model,
        })
  return {
    schemaVersion: WORKLOAD_SCHEMA_VERSION,
    kind: pretrain ? 'pretrain' : 'finetune',
    model,
    method: pretrain ? 'auto' : (flags.method as Workload['method']),
    targetTokens: flags.tokens === undefined ? null : parseCount(flags.tokens, '--tokens'),
    frozenModels,
    datasetBytes: flags['dataset-size'] ? parseSizeBytes(flags['dataset-size']) : null,
    datasetTokens: dataset?.tokens ?? countedDatasetTokens(flags),
    tokensPerExample: dataset
      ? dataset.tokens / dataset.examples
      : flags['tokens-per-example'] === undefined
        ? null
        : parseCount(flags['tokens-per-example'], '--tokens-per-example'),
    dataset,
    epochs: flags.epochs === undefined ? null : parseEpochs(flags.epochs),
    timeBudgetHours: flags['time-budget'] ? parseDurationHours(flags['time-budget']) : null,
    targetEffectiveBatch: flags['target-batch'] ?? null,
    seq: flags.seq ?? null,
    nodes: flags.nodes,
    pins: pinsFromFlags(flags, model),
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

/** The Llama-layout shape generated for `--params`, which must be a size a decoder can have. */
function generatedModel(text: string) {
  const params = parseCount(text, '--params')
  if (params < 1e6 || params > 1e12) {
    throw new RigfitError('usage', 'E_BAD_COUNT', `--params "${text}" is outside 1M to 1T parameters.`, {
      suggestion: 'Ask for a size such as --params 125M, 1B or 7B.',
    })
  }
  return generateModelShape(params)
}
