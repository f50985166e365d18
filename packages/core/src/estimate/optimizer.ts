import { distinctTargets, loraCopies, loraInWidth, loraOutWidth } from '../model/lora-shapes.js'
import type { LoraSpec, ModelSpec, Optimizer } from '../schemas/index.js'
import { ADAM_8BIT_BYTES_PER_PARAM } from './constants.js'

/**
 * Adafactor's factored second moment (Shazeer & Stern 2018; the Hugging Face default without a first moment):
 * a row and a column vector per weight matrix, a full vector per bias or norm. Returns state elements.
 */
export function adafactorStateElements(
  spec: ModelSpec,
  lora: Pick<LoraSpec, 'rank' | 'targets'> | null,
  totalParams: number,
): number {
  const h = spec.hidden
  const q = spec.heads * spec.headDim
  const kv = spec.kvHeads * spec.headDim
  const f = spec.ffn
  const experts = spec.experts?.count ?? 1
  const gated = spec.mlp !== 'gelu'
  if (lora) {
    // Each adapter is two matrices, rank x in and out x rank.
    let perLayer = 0
    for (const target of distinctTargets(lora.targets)) {
      const copies = loraCopies(spec, target)
      perLayer += copies * (2 * lora.rank + loraInWidth(spec, target) + loraOutWidth(spec, target))
    }
    return spec.layers * perLayer
  }
  const matrixElements =
    h * q + 2 * h * kv + q * h + experts * (gated ? 3 : 2) * h * f + (spec.experts ? h * experts : 0)
  const factoredPerLayer =
    2 * (h + q) + 2 * (h + kv) + experts * (gated ? 3 : 2) * (h + f) + (spec.experts ? h + experts : 0)
  const embeddingMatrices =
    spec.vocab * h +
    (spec.positions === 'learned' ? spec.maxPositions * h : 0) +
    spec.typeVocab * h +
    (spec.tiedEmbeddings ? 0 : spec.vocab * h)
  const embeddingFactored =
    spec.vocab +
    h +
    (spec.positions === 'learned' ? spec.maxPositions + h : 0) +
    (spec.typeVocab > 0 ? spec.typeVocab + h : 0) +
    (spec.tiedEmbeddings ? 0 : spec.vocab + h)
  const vectors = totalParams - spec.layers * matrixElements - embeddingMatrices
  return spec.layers * factoredPerLayer + embeddingFactored + Math.max(0, vectors)
}

/** Bytes of optimizer state for `trainable` parameters whose state dtype has `stateBytes` bytes. */
export function optimizerStateBytes(
  optimizer: Optimizer,
  trainable: number,
  stateBytes: number,
  adafactorElements: () => number,
): number {
  switch (optimizer) {
    case 'adamw':
      return 2 * stateBytes * trainable
    case 'adamw-8bit':
      return ADAM_8BIT_BYTES_PER_PARAM * trainable
    case 'adafactor':
      return stateBytes * adafactorElements()
    case 'sgd':
      return 0
    case 'sgd-momentum':
      return stateBytes * trainable
  }
}

/**
 * Bytes an optimizer step reads and writes per parameter with fp32 state: AdamW reads the weight, gradient and
 * two moments and writes the weight and moments (28 B); the 8-bit variant moves one byte per moment; Adafactor
 * reads and writes a full-size update; SGD reads weight and gradient and writes the weight (plus momentum).
 */
export const OPTIMIZER_STEP_TRAFFIC: Record<Optimizer, number> = {
  adamw: 28,
  'adamw-8bit': 16,
  adafactor: 24,
  sgd: 12,
  'sgd-momentum': 20,
}
