import {
  type EstimateInput,
  type EstimateResult,
  fitVerdict,
  formatStackRef,
  runKind,
  stackAlternatives,
  type UserEstimateRequest,
} from '@rigfit/core'
import type { StackChoice } from './estimate-stack-flags.js'

const NAMES = {
  hf: 'Hugging Face',
  litgpt: 'LitGPT',
  torchtune: 'torchtune',
  torchtitan: 'torchtitan',
  nemo: 'NeMo',
  plain: 'a plain PyTorch loop',
} as const

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(0)} GiB`

/**
 * The stack the estimate assumed, and in one line the stacks that would change its verdict or memory by more than
 * 10% ("as LitGPT or NeMo run it, with 16-bit adapters: 78 GiB").
 */
export function stackNotes(
  stack: StackChoice,
  request: UserEstimateRequest,
  result: EstimateResult,
  input: EstimateInput,
  vramBytes: number | undefined,
): string[] {
  const ref = formatStackRef(stack.ref)
  const notes = [
    stack.named
      ? `Stack: ${ref}.`
      : `Stack: ${ref} (Transformers Trainer with PEFT), assumed as most fine-tunes run it; pass --stack litgpt, torchtune, torchtitan, nemo or plain for yours.`,
  ]
  // Judged as the assumed stack's estimate was: by the device, or against --vram alone.
  const kind = runKind(input)
  const alternatives = stackAlternatives(request, stack.ref, result, (total, other) =>
    request.device !== null
      ? other.verdict
      : vramBytes === undefined
        ? null
        : fitVerdict(total, vramBytes, kind).verdict,
  )
  if (alternatives.length > 0) {
    const parts = alternatives.map((alt) => {
      const who = alt.stacks.map((name) => NAMES[name]).join(' or ')
      const how = alt.differences.length > 0 ? `, with ${alt.differences.join(' and ')}` : ''
      const verdict = alt.verdict && alt.verdict !== result.verdict ? ` (${alt.verdict})` : ''
      return `as ${who} run${alt.stacks.length > 1 ? '' : 's'} it${how}: ${gib(alt.totalBytes)}${verdict}`
    })
    notes.push(`Other stacks differ: ${parts.join('; ')}.`)
  }
  return notes
}
