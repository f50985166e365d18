import type { DatasetFile, Workload } from '../schemas/workload.js'
import { gibText, TEXT_BYTES_PER_TOKEN } from '../units.js'
import type { ModeBudget } from './modes.js'
import type { Candidate } from './search.js'
import type { TrainingDevices } from './training-devices.js'

export function fmtParams(params: number): string {
  if (params >= 1e9) return `${(params / 1e9).toFixed(params >= 10e9 ? 0 : 1)}B`
  if (params >= 1e6) return `${Math.round(params / 1e6)}M`
  return `${Math.round(params / 1e3)}K`
}

/** A token count at a scale that shows it: 2.05B, 4.1M, 12K, 950. */
export function fmtTokens(tokens: number): string {
  if (tokens >= 1e9) return `${(tokens / 1e9).toFixed(2)}B`
  if (tokens >= 1e6) return `${(tokens / 1e6).toFixed(1)}M`
  if (tokens >= 1e3) return `${Math.round(tokens / 1e3)}K`
  return `${Math.round(tokens)}`
}

/** A duration as a person writes it: 5 min, 2 h, 1.5 h (a --time-budget of 5m is 0.083... hours). */
export function fmtHoursText(hours: number): string {
  if (hours < 1) return `${Math.max(1, Math.round(hours * 60))} min`
  return `${Number.isInteger(hours) ? hours : hours.toFixed(1)} h`
}

/** A speed in tokens/s as the plan prints it: 2.3K, 21.6K, 950. */
export function fmtRate(tokensPerSecond: number): string {
  return tokensPerSecond >= 1e3 ? `${(tokensPerSecond / 1e3).toFixed(1)}K` : `${Math.round(tokensPerSecond)}`
}

export function describeDevices(devices: TrainingDevices): string {
  if (devices.kind === 'cpu') return `CPU (${devices.name})`
  const count = devices.gpus.length
  return `${count > 1 ? `${count}x ` : ''}${devices.name} (${gibText(devices.capacityBytes)} GiB${devices.kind === 'mps' ? ' working set' : ''})`
}

export function describeWorkload(workload: Workload, best: Candidate): string {
  const what =
    workload.kind === 'pretrain'
      ? `pretrain a ${fmtParams(best.result.params.total)} ${best.model.modelType} model from scratch`
      : `fine-tune ${best.model.name} (${best.method}${best.lora ? `, rank ${best.lora.rank}` : ''})`
  return workload.dataset ? `${what} on ${describeDatasetFile(workload.dataset)}` : what
}

/** A counted dataset file in words: "train.jsonl (52,000 examples, 18.2M tokens by its tokenizer.json)". */
export function describeDatasetFile(dataset: DatasetFile): string {
  const name = dataset.path.split(/[\\/]/).pop() || dataset.path
  const how =
    dataset.method === 'tokenizer'
      ? 'by its tokenizer.json'
      : `estimated at ${TEXT_BYTES_PER_TOKEN} bytes per token`
  return `${name} (${dataset.examples.toLocaleString('en-US')} examples, ${fmtTokens(dataset.tokens)} tokens ${how})`
}

/** Why this model: the fine-tuned one, or where the generated one sits in the mode's range. */
export function modelReason(workload: Workload, best: Candidate, budget: ModeBudget): string {
  if (workload.kind === 'finetune') return `fine-tunes ${best.model.name} with ${best.method}`
  if (workload.model) {
    const tokens = workload.targetTokens
      ? `${fmtParams(workload.targetTokens)} tokens asked for`
      : 'its Chinchilla tokens'
    return `pretrains the ${fmtParams(best.result.params.total)} model asked for (${best.model.name}) on ${tokens}`
  }
  const [low, high] = budget.paramRange
  const range = `${fmtParams(low)}-${fmtParams(high)}`
  if (!best.inRange) return `nothing in the ${budget.mode} range (${range}) fits; the largest model that does`
  return best.timeFeasible
    ? `the largest model in ${range} that fits memory and trains to ${budget.tokensPerParam} tokens/param within ${budget.hoursRange[1]} h`
    : `no model in ${range} reaches ${budget.tokensPerParam} tokens/param within ${budget.hoursRange[1]} h here: the smallest, with the time budget binding`
}

/** A LoRA shape in words: "rank 64 on q,k,v,o,gate,up,down". */
export function describeAdapters(lora: { rank: number; targets: readonly string[] }): string {
  return `rank ${lora.rank} on ${lora.targets.join(',')}`
}
