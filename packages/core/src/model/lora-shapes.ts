import type { LoraTarget } from '../schemas/estimate.js'
import type { ModelSpec } from '../schemas/model-spec.js'

/** Input width of the linear layer a LoRA target wraps (its adapter's A matrix is rank x this). */
export function loraInWidth(spec: ModelSpec, target: LoraTarget): number {
  if (target === 'o') return spec.heads * spec.headDim
  return target === 'down' ? spec.ffn : spec.hidden
}

/** Output width of the linear layer a LoRA target wraps (its adapter's B matrix is this x rank). */
export function loraOutWidth(spec: ModelSpec, target: LoraTarget): number {
  switch (target) {
    case 'q':
      return spec.heads * spec.headDim
    case 'k':
    case 'v':
      return spec.kvHeads * spec.headDim
    case 'gate':
    case 'up':
      return spec.ffn
    default:
      return spec.hidden
  }
}

/** Copies of the target's layer in one block: one per expert for the MLP, none of `gate` in an ungated MLP. */
export function loraCopies(spec: ModelSpec, target: LoraTarget): number {
  if (target === 'q' || target === 'k' || target === 'v' || target === 'o') return 1
  if (target === 'gate' && spec.mlp === 'gelu') return 0
  return spec.experts?.count ?? 1
}

// The planner passes one target list to thousands of estimates; each is deduplicated once.
const distinctCache = new WeakMap<readonly LoraTarget[], readonly LoraTarget[]>()

/** Each target once, in order: a layer named twice is wrapped once. */
export function distinctTargets(targets: readonly LoraTarget[]): readonly LoraTarget[] {
  let distinct = distinctCache.get(targets)
  if (!distinct) {
    distinct = [...new Set(targets)]
    distinctCache.set(targets, distinct)
  }
  return distinct
}
