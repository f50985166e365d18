import { estimate } from '../estimate/estimate.js'
import type { EstimateResult, FitVerdict } from '../schemas/estimate.js'
import { type StackMechanisms, StackName, type StackRef } from '../schemas/stack.js'
import { resolveStack } from './resolve-stack.js'
import { type UserEstimateRequest, userEstimateInput } from './stack-estimate-input.js'
import { CURRENT_STACK_VERSION } from './stack-table.js'

/** How far another stack's memory must be from the assumed one's to be worth a line. */
const MEMORY_SHARE = 0.1

export interface StackAlternative {
  /** The stacks (current releases) that give this figure. */
  stacks: StackName[]
  /** Their predicted nvidia-smi total per device. */
  totalBytes: number
  verdict: FitVerdict | null
  /** What they do differently that moves the memory, in words ("bf16 adapters"). */
  differences: string[]
}

/** The mechanisms that change memory, named for a reader, when two stacks differ in them. */
function differencesOf(a: StackMechanisms, b: StackMechanisms, request: UserEstimateRequest): string[] {
  const { settings } = request
  const trueHalf = settings.precision === 'bf16-true' || settings.precision === 'fp16-true'
  const out: string[] = []
  if (settings.lora && trueHalf && a.adapterDtype !== b.adapterDtype)
    out.push(b.adapterDtype === 'model' ? '16-bit adapters' : 'fp32 adapters')
  if (trueHalf && a.upcastLogits !== b.upcastLogits)
    out.push(b.upcastLogits ? 'fp32 logits in the loss' : '16-bit logits in the loss')
  if (
    (a.lossChunks > 1 || a.lossChunkPositions !== null) !==
    (b.lossChunks > 1 || b.lossChunkPositions !== null)
  )
    out.push(b.lossChunks > 1 || b.lossChunkPositions !== null ? 'a chunked loss' : 'the whole loss at once')
  if (settings.quant && settings.quant !== 'none' && a.kbitFp32Casts !== b.kbitFp32Casts)
    out.push(b.kbitFp32Casts ? 'fp32 embeddings and norms' : '16-bit embeddings and norms')
  if (
    (settings.sharding ?? 'none') === 'fsdp' &&
    settings.lora &&
    a.frozenStaysGathered !== b.frozenStaysGathered
  )
    out.push(b.frozenStaysGathered ? 'FSDP1 keeping frozen layers gathered' : 'frozen layers resharded')
  if (!settings.lora && a.optimizerImpl !== b.optimizerImpl) out.push(`a ${b.optimizerImpl} optimizer step`)
  return out
}

/**
 * The other stacks (each at its current release) under which the same typed settings change the verdict or the
 * memory by more than 10%, grouped by figure: what `rigfit estimate` names in one line. Runs a handful of estimates,
 * once per command, never in the planner's loop.
 */
export function stackAlternatives(
  request: UserEstimateRequest,
  assumed: StackRef,
  result: EstimateResult,
  verdictOf: (totalBytes: number, result: EstimateResult) => FitVerdict | null,
): StackAlternative[] {
  const base = resolveStack(assumed).mechanisms
  const groups = new Map<string, StackAlternative>()
  for (const name of StackName.options) {
    if (name === assumed.name) continue
    const mechanisms = resolveStack({ name, version: CURRENT_STACK_VERSION[name] }).mechanisms
    const other = estimate(userEstimateInput({ ...request, stack: mechanisms }))
    const totalBytes = other.perDevice.total
    const verdict = verdictOf(totalBytes, other)
    const moved = Math.abs(totalBytes - result.perDevice.total) > MEMORY_SHARE * result.perDevice.total
    if (!moved && verdict === result.verdict) continue
    const key = `${Math.round(totalBytes / 2 ** 28)}:${verdict}`
    const group = groups.get(key)
    if (group) group.stacks.push(name)
    else
      groups.set(key, {
        stacks: [name],
        totalBytes,
        verdict,
        differences: differencesOf(base, mechanisms, request),
      })
  }
  return [...groups.values()].sort((x, y) => x.totalBytes - y.totalBytes)
}
