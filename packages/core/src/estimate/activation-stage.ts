import type { EstimateInput } from '../schemas/index.js'
import {
  type ActivationContext,
  attentionHalfBytes,
  blockBackwardWorkspace,
  mlpHalfBytes,
  normBytes,
} from './activations.js'
import type { ParameterCounts, PrecisionBytes } from './estimate.js'
import { logitBytesPerVocabEntry } from './loss.js'

/** Activations of the micro-batch, backward's workspace, and the logits and loss at the start of backward. */
export function activationMemory(input: EstimateInput, params: ParameterCounts, bytes: PrecisionBytes) {
  const spec = input.model
  const lora = input.lora
  const h = spec.hidden
  const { fullTraining } = params
  const { e, residualBytes, adapterBytes } = bytes
  const tokens = input.microBatch * input.seq
  const ctx: ActivationContext = {
    elementBytes: e,
    residualBytes,
    attention: input.attention,
    fullTraining,
    lora,
    quantKeepsInputs: !fullTraining && input.quant === 'nf4' && input.quantKeepsInputs,
    adapterBytes,
    pythonActivations: input.pythonActivations,
  }
  const mlpHalf = mlpHalfBytes(spec, ctx)
  const block = attentionHalfBytes(spec, ctx, input.seq) + mlpHalf
  const keptPerBlock = input.gradCheckpointing ? h * residualBytes : block
  const normSaved = normBytes(spec, ctx)
  const lmHead = input.head === 'lm'
  const edges =
    (spec.hiddenDropout > 0 ? h : 0) +
    (spec.kind === 'encoder' ? h * normSaved : h * normSaved + (fullTraining && lmHead ? h * e : 0))
  const activations = tokens * (spec.layers * keptPerBlock + edges)
  const workspace =
    tokens * (blockBackwardWorkspace(spec, ctx, input.seq, mlpHalf) + (input.gradCheckpointing ? block : 0))
  const logits = logitsBytes(input, bytes, tokens)
  return { tokens, block, keptPerBlock, activations, workspace, logits }
}

/** Logits and loss at the start of backward, or one chunk of them under a fused linear cross-entropy. */
function logitsBytes(input: EstimateInput, { mixed, fp32, e }: PrecisionBytes, tokens: number): number {
  const spec = input.model
  const h = spec.hidden
  const lmHead = input.head === 'lm'
  let logits = 0
  if (lmHead) {
    const lossBytes = mixed || fp32 || input.upcastLogits ? 4 : e
    const perToken = spec.vocab * logitBytesPerVocabEntry(e, lossBytes, input.lossChunks)
    if (input.fusedLoss) {
      // Liger's chunking keeps a chunk about the size of the hidden states (BT / ceil(V / H) tokens) and an
      // fp32 gradient of the hidden states; the head's weight gradient is already among the gradients.
      const chunk = Math.min(
        tokens,
        2 ** Math.ceil(Math.log2(Math.max(1, tokens / Math.ceil(spec.vocab / h)))),
      )
      logits = chunk * perToken + tokens * h * 4
    } else {
      logits = tokens * perToken
    }
  } else {
    logits = input.microBatch * h * e * 2
  }
  return logits
}
