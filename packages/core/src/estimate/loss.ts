import type { EstimateInput } from '../schemas/index.js'
import { LOSS_LOGIT_COPIES } from './constants.js'

/**
 * Bytes of logits and loss state per token and vocabulary entry at the loss's backward. Whole: the logits in the
 * head's type and the loss's three copies (`LOSS_LOGIT_COPIES`). Chunked (torchtune's CEWithChunkedOutputLoss,
 * LitGPT's chunked_cross_entropy): every chunk's saved log-softmax output and, since autograd runs every chunk's
 * loss backward before the head's, every chunk's logit gradient in the head's type stay alive, while the loss's
 * own gradient temporaries exist for one chunk at a time.
 */
export function logitBytesPerVocabEntry(
  headBytes: number,
  lossBytes: number,
  chunks: EstimateInput['lossChunks'],
): number {
  if (chunks <= 1) return headBytes + lossBytes * LOSS_LOGIT_COPIES
  return 2 * headBytes + lossBytes * (1 + (LOSS_LOGIT_COPIES - 1) / chunks)
}

/**
 * Bytes per element of a frozen base's weights other than its quantised linear layers (embeddings, norms, head):
 * fp32 where prepare_model_for_kbit_training cast them, else the training's element size.
 */
export function frozenOtherElementBytes(
  input: Pick<EstimateInput, 'quant' | 'kbitFp32Casts'>,
  element: number,
): number {
  return input.quant !== 'none' && input.kbitFp32Casts ? 4 : element
}
