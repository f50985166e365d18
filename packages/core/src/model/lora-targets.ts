import { RigfitError } from '../errors.js'
import { LoraTarget } from '../schemas/estimate.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import { editDistance } from './close-matches.js'
import { loraCopies } from './lora-shapes.js'
import { MODULE_LAYOUTS, type ModuleLayout, moduleLayout, peftNames, pickedBy } from './peft-modules.js'

/** PEFT's `target_modules="all-linear"`: every linear layer but the output head (rigfit: every block linear). */
export const ALL_LINEAR = 'all-linear'

const OWN = LoraTarget.options as readonly string[]

/** Every rigfit target the model has a layer for: an ungated MLP has no `gate`. */
function allLinear(model: ModelSpec | null): LoraTarget[] {
  const layout = model ? moduleLayout(model.modelType) : undefined
  if (layout) return LoraTarget.options.filter((t) => layout.linears.some((l) => l.targets.includes(t)))
  return LoraTarget.options.filter((t) => model === null || loraCopies(model, t) > 0)
}

const leafOf = (path: string) => path.split('.').at(-1) as string

/**
 * What to suggest for a name the model does not have: where another architecture has a layer of that name (a Llama
 * name on GPT-2), this model's layers for the same targets; else the known name fewest edits away.
 */
function nearest(
  name: string,
  layout: ModuleLayout | undefined,
  known: readonly string[],
): string | undefined {
  const elsewhere = Object.values(MODULE_LAYOUTS)
    .flatMap((other) => other.linears)
    .find((layer) => layer.path === name || layer.path.endsWith(`.${name}`))
  if (elsewhere) {
    const same = layout
      ? layout.linears
          .filter((l) => l.targets.some((t) => elsewhere.targets.includes(t)))
          .map((l) => leafOf(l.path))
      : [...elsewhere.targets]
    if (same.length > 0) return [...new Set(same)].join(',')
  }
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 2)) ? best : undefined
}

function unknown(
  flag: string,
  name: string,
  model: ModelSpec | null,
  layout: ModuleLayout | undefined,
  known: readonly string[],
): never {
  const near = nearest(name, layout, known)
  const arch = model ? ` of ${model.id} (model_type ${model.modelType})` : ''
  throw new RigfitError('usage', 'E_USAGE', `${flag}: unknown layer "${name}"${arch}`, {
    suggestion: `${near ? `Did you mean "${near}"? ` : ''}Name layers among ${known.join(',')}.`,
    details: { flag, name, known },
  })
}

/**
 * The rigfit targets a `--lora-targets` list names: rigfit's own (q,k,v,o,gate,up,down), `all-linear`, or the
 * model's Hugging Face module names as PEFT's `target_modules` takes them (`q_proj`, `c_attn`, `query_key_value`,
 * `mlp.c_proj`, ...; `peft-modules.ts`). A fused projection is its parts; each target once, in order of mention.
 */
export function resolveLoraTargets(
  text: string,
  model: ModelSpec | null,
  flag = '--lora-targets',
): LoraTarget[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  const layout = model ? moduleLayout(model.modelType) : undefined
  const known = [...OWN, ALL_LINEAR, ...(layout ? peftNames(layout) : [])]
  if (names.length === 0) {
    throw new RigfitError('usage', 'E_USAGE', `${flag}: no layer given`, {
      suggestion: `Name layers among ${known.join(',')}, e.g. ${flag} q,v.`,
    })
  }
  const targets = names.flatMap((name): readonly LoraTarget[] => {
    if (name === ALL_LINEAR) return allLinear(model)
    if (OWN.includes(name)) return [name as LoraTarget]
    const picked = layout?.linears.filter((layer) => pickedBy(name, layout, layer)) ?? []
    if (picked.length === 0) unknown(flag, name, model, layout, known)
    return picked.flatMap((layer) => layer.targets)
  })
  return [...new Set(targets)]
}
