import { distinctTargets, loraInWidth, loraOutWidth } from '../model/lora-shapes.js'
import type { Attention, LoraSpec, ModelSpec } from '../schemas/index.js'
import { geluActivationOps } from './activation-ops.js'
import { attentionDropoutBytes } from './attention-dropout.js'

export interface ElementwiseContext {
  /** Bytes of an activation element between ops: 2 in 16-bit and autocast, 4 in fp32. */
  elementBytes: number
  /** Bytes of the residual stream (fp32 under autocast). */
  residualBytes: number
  attention: Attention
  lora: (Pick<LoraSpec, 'targets'> & Partial<Pick<LoraSpec, 'dropout'>>) | null
  /** Bytes of an adapter's elements: 4 for PEFT's fp32 adapters on a 16-bit base, else the activations'. */
  adapterBytes?: number
  /** The model's own activation code runs (EstimateInput.pythonActivations). */
  pythonActivations?: boolean
}

/**
 * Bytes eager PyTorch moves through device memory in one block's element-wise ops, per token, forward and
 * backward: every op reads its inputs and writes its output in full, counted op by op from the Hugging Face
 * implementations. RMSNorm upcasts to fp32 and runs as seven ops, rotary embeddings rotate queries and keys in
 * about five passes of two to three tensors each, grouped-query attention copies keys and values out to every
 * head, SwiGLU multiplies two activations, and eager attention drops out its probabilities where the config asks
 * (`attention-dropout.ts`); LayerNorm and GELU are one kernel each. Backward reads the saved
 * inputs and the incoming gradient and writes the outgoing one: about twice the forward's traffic.
 */
export function eagerElementwiseBytes(spec: ModelSpec, ctx: ElementwiseContext, seq: number): number {
  const a = ctx.elementBytes
  const h = spec.hidden
  const q = spec.heads * spec.headDim
  const kv = spec.kvHeads * spec.headDim
  const norms = 2 * h * (spec.norm === 'rmsnorm' ? ctx.residualBytes + 2 * a + 28 : ctx.residualBytes + 4)
  const rope = spec.positions === 'rope' ? 11 * a * (q + kv) : 0
  const repeatKv = spec.kvHeads < spec.heads ? 2 * a * (kv + q) : 0
  const mergeHeads = 2 * a * q
  const residualAdds = 2 * 3 * ctx.residualBytes * h
  const topK = spec.experts?.topK ?? 1
  const gelu = geluActivationOps(spec, ctx.pythonActivations ?? false)
  const activation = (spec.mlp === 'gelu' ? gelu.forwardTraffic : 5) * a * spec.ffn * topK
  // Routing gathers each token's hidden state into its top-k experts and adds their weighted outputs back:
  // a read and a write per copy each way, the weight product, and the zeroed output they are added into.
  const routing = spec.experts ? (5 * topK + 1) * a * h : 0
  const dropout = spec.hiddenDropout > 0 ? 2 * (2 * a + 1) * h : 0
  // Eager attention materialises the scores: scale, mask, softmax in fp32 and its cast back, per head and key.
  const scores =
    (ctx.attention === 'eager' ? spec.heads * seq * (6 * a + 8) : 0) +
    attentionDropoutBytes(spec, ctx.attention, a, seq)
  let adapters = 0
  if (ctx.lora) {
    // Each adapter's output is scaled and added to its base layer's; adapters in another type also cast their
    // input to it and the sum back.
    const b = ctx.adapterBytes ?? a
    const dropout = (ctx.lora.dropout ?? 0) > 0
    for (const target of distinctTargets(ctx.lora.targets)) {
      const out = loraOutWidth(spec, target)
      const input = loraInWidth(spec, target)
      adapters += 5 * b * out + (b === a ? 0 : (a + b) * (input + out))
      // PEFT's lora_dropout runs on the adapter's input: it reads it and writes the dropped copy and a one-byte
      // mask; backward reads the mask and the incoming gradient and writes the outgoing one. Both passes are
      // counted here, divided by the three that the forward's total is multiplied by below.
      if (dropout) adapters += ((2 * b + 1) * input * 2) / 3
    }
  }
  const forward =
    norms + rope + repeatKv + mergeHeads + residualAdds + activation + routing + dropout + scores + adapters
  return 3 * forward
}
