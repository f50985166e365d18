import { distinctTargets } from '../model/lora-shapes.js'
import type { EstimateInput, ModelSpec } from '../schemas/index.js'
import { geluActivationOps } from './activation-ops.js'
import { adaptersInFp32 } from './adapter-dtype.js'
import { attentionDropoutKernels } from './attention-dropout.js'
import { COMPILED_KERNEL_SHARE, OPTIMIZER_KERNELS_PER_TENSOR } from './constants.js'

/**
 * GPU kernels eager PyTorch launches for one block's forward, counted from the Hugging Face implementations of
 * each layout: the norms (RMSNorm computes in fp32 in seven ops, LayerNorm is one kernel), the linear layers (plus
 * autocast's cast of each fp32 weight), rotary embeddings, the key/value repeat of grouped-query attention, the
 * attention itself, the MLP's activation, and the residual adds.
 */
export function forwardKernelsPerBlock(
  spec: ModelSpec,
  autocast: boolean,
  quantized = false,
  pythonActivations = false,
): number {
  const norms = 2 * (spec.norm === 'rmsnorm' ? 7 : 1)
  const gated = spec.mlp !== 'gelu'
  // Hugging Face's sparse MoE blocks loop over the experts, each running its own MLP on the tokens routed to it.
  const mlps = spec.experts?.count ?? 1
  const linearLayers = 4 + (gated ? 3 : 2) * mlps
  // A 4-bit or 8-bit base dequantises each linear's weight in a kernel of its own before the matmul.
  const linears = linearLayers * (autocast ? 2 : 1) + (quantized ? linearLayers : 0)
  const rope = spec.positions === 'rope' ? 10 : 0
  const repeatKv = spec.kvHeads < spec.heads ? 2 : 0
  const activation = (gated ? 2 : geluActivationOps(spec, pythonActivations).kernels) * mlps
  const routing = spec.experts ? ROUTER_KERNELS + spec.experts.count * KERNELS_PER_ROUTED_EXPERT : 0
  return norms + linears + rope + repeatKv + activation + routing + 2 + 1
}

/** The router of a sparse MoE block: its linear, the fp32 softmax, top-k, renormalisation, cast and expert mask. */
const ROUTER_KERNELS = 8

/**
 * Kernels each expert adds around its MLP in the Hugging Face loop: finding its tokens (`torch.where` on the
 * expert mask), gathering their hidden states, indexing and applying their routing weights, and `index_add_` of
 * the result into the block's output.
 */
const KERNELS_PER_ROUTED_EXPERT = 6

/** Eager attention: scores, scale, mask, softmax and the weighted sum; SDPA and FlashAttention are one kernel. */
const ATTENTION_KERNELS = { eager: 5, sdpa: 1, flash: 1 } as const

/** Kernels a LoRA adapter adds to its layer's forward: A, B, the scaling and the add (and autocast's casts). */
const LORA_FORWARD_KERNELS = 4

/**
 * Kernels launched per micro-batch: every block's forward, a backward of about twice as many, the forward again
 * under full recomputation, and the embedding, final norm, head and loss. torch.compile fuses most of them.
 */
export function kernelsPerMicroStep(input: EstimateInput): number {
  const spec = input.model
  const autocast = input.precision.endsWith('-mixed')
  const quantized = input.lora !== null && input.quant !== 'none'
  let forward =
    forwardKernelsPerBlock(spec, autocast, quantized, input.pythonActivations) +
    ATTENTION_KERNELS[input.attention] -
    1 +
    attentionDropoutKernels(spec, input.attention)
  // Autocast, and fp32 adapters on a 16-bit base, cast the adapter's input and its output.
  const casts = autocast || adaptersInFp32(input) ? 2 : 0
  if (input.lora) {
    // PEFT's lora_dropout is one more kernel per adapted layer (and its backward).
    const dropout = input.lora.dropout > 0 ? 1 : 0
    forward += distinctTargets(input.lora.targets).length * (LORA_FORWARD_KERNELS + casts + dropout)
  }
  const perBlock = forward * (3 + (input.gradCheckpointing ? 3 : 0))
  const outside = 3 * 8
  const kernels = spec.layers * perBlock + outside
  return input.compile ? kernels * COMPILED_KERNEL_SHARE : kernels
}

/** Parameter tensors one block trains: its linear weights (and biases), its norms' weights (and biases). */
function trainableTensorsPerBlock(input: EstimateInput): number {
  const spec = input.model
  if (input.lora) return 2 * distinctTargets(input.lora.targets).length
  const gated = spec.mlp !== 'gelu'
  const linears = 4 + (gated ? 3 : 2) * (spec.experts?.count ?? 1)
  const biases = spec.bias === 'all' ? linears : spec.bias === 'qkv' ? 3 : 0
  const norms = spec.norm === 'layernorm' ? 4 : 2
  return linears + biases + norms + (spec.experts ? 1 : 0)
}

/**
 * Kernels of one optimizer step that cost a launch each: the per-tensor loop launches a dozen per tensor; the
 * multi-tensor and fused implementations batch tensors into a few launches, which this leaves out.
 */
export function optimizerStepKernels(input: EstimateInput): number {
  if (input.optimizerImpl !== 'per-tensor') return 0
  const tensors = input.model.layers * trainableTensorsPerBlock(input) + (input.lora ? 0 : 4)
  return tensors * OPTIMIZER_KERNELS_PER_TENSOR
}
