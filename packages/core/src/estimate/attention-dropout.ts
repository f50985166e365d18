import type { Attention, ModelSpec } from '../schemas/index.js'

/**
 * Dropout on the attention probabilities in eager attention. Hugging Face's eager attention (GPT-2's
 * `eager_attention_forward`, BERT's self-attention) and hand-written GPT-2 loops drop out the softmax's output, the
 * whole score matrix of every head, when the config's `attn_pdrop` / `attention_probs_dropout_prob` is above zero
 * (GPT-2 and BERT ship 0.1): one more kernel, which reads the probabilities and writes the dropped copy and a
 * one-byte mask per score, and whose backward reads the mask and the incoming gradient and writes the outgoing one.
 * SDPA and FlashAttention draw the dropout inside their one kernel, so it moves nothing through memory there.
 * Shown by the RTX 3090 rows of `gilesthomas-llm-from-scratch.jsonl`: at 1,024 tokens and twelve heads the score
 * matrix is 16 times the hidden state, and its dropout is about an eighth of the fp16 step's memory traffic.
 */
export function attentionDropsScores(
  spec: Pick<ModelSpec, 'attentionDropout'>,
  attention: Attention,
): boolean {
  return attention === 'eager' && spec.attentionDropout > 0
}

/**
 * Bytes per token the forward's dropout moves over the scores, counted like the other element-wise ops of a block
 * (`eagerElementwiseBytes` multiplies the forward by three for forward and backward): the read of the
 * probabilities, the dropped copy, and the mask.
 */
export function attentionDropoutBytes(
  spec: Pick<ModelSpec, 'attentionDropout' | 'heads'>,
  attention: Attention,
  elementBytes: number,
  seq: number,
): number {
  return attentionDropsScores(spec, attention) ? spec.heads * seq * (2 * elementBytes + 1) : 0
}

/** The dropout's kernel in a block's forward (its backward is counted with the rest of the block's). */
export function attentionDropoutKernels(
  spec: Pick<ModelSpec, 'attentionDropout'>,
  attention: Attention,
): number {
  return attentionDropsScores(spec, attention) ? 1 : 0
}
