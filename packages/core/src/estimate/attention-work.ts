import type { EstimateInput } from '../schemas/index.js'

/**
 * Share of the attention products `attentionFlopsPerToken` counts (every query against every key) that the step
 * pays for, at the attention efficiency. FlashAttention-2 skips the key blocks a causal mask hides entirely and
 * runs about twice as fast as the first FlashAttention (Dao 2023, arXiv 2307.08691: §3.1.1 on causal masking, and
 * the abstract): counted here as half the square at the rate the earlier kernels reach on the whole of it.
 * PyTorch's SDPA runs FlashAttention-2 from 2.2 (its release notes); before, its flash kernel was the first
 * generation. Eager attention multiplies the whole score matrix and masks it afterwards, and an encoder attends
 * both ways: the whole square.
 * VectorLM's Llama 3 8B runs (flash-attn 2.5.8) keep 90% of their 2,048-token speed at 8,192 tokens, where the whole
 * square predicts 82%; llm-foundry's MPT tables, measured before PyTorch 2.0, follow the whole square to 65,536.
 */
export function attentionWorkShare(
  input: Pick<EstimateInput, 'attention' | 'model' | 'flashAttention2'>,
): number {
  const skipsMasked = input.attention !== 'eager' && input.model.kind === 'decoder' && input.flashAttention2
  return skipsMasked ? CAUSAL_BLOCK_SHARE : 1
}

/** Blocks on and below the diagonal of a causal score matrix of many blocks: one half. */
const CAUSAL_BLOCK_SHARE = 0.5

/**
 * FLOPs to add to the step's count so that attention runs at its own rate: its paid share of the products at
 * `efficiency` of the matmul rate, against all of them at the matmul rate in `flopsPerToken`.
 */
export function attentionExtraFlops(
  input: Pick<EstimateInput, 'attention' | 'model' | 'flashAttention2'>,
  attentionFlops: number,
  efficiency: number,
): number {
  return attentionFlops * (attentionWorkShare(input) / efficiency - 1)
}
