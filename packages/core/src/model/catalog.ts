import { z } from 'zod'
import { deepFreeze } from '../deep-freeze.js'
import { ModelSpec } from '../schemas/model-spec.js'
import catalogData from './catalog.json' with { type: 'json' }
import { activationOf, traitsOf } from './family-traits.js'

/** One model of catalog.json as written: a ModelSpec without what the source and the model type's traits give. */
export type CatalogEntry = Omit<
  z.input<typeof ModelSpec>,
  'schemaVersion' | 'source' | 'kind' | 'mlp' | 'norm' | 'positions' | 'bias'
>

/**
 * A catalog entry with what its source and model type's traits give, unparsed: the one place both the start-up
 * completion below and the full check (catalog-check.ts) build a model from its entry.
 */
export function withTraits(entry: CatalogEntry): Record<string, unknown> {
  const traits = traitsOf(entry.modelType)
  if (!traits) throw new Error(`model catalog.json: ${entry.id} has unknown model type "${entry.modelType}"`)
  const { kind, mlp, norm, positions, bias } = traits
  const activation = activationOf(undefined, traits)
  return { schemaVersion: 1, source: 'catalog', ...entry, kind, mlp, activation, norm, positions, bias }
}

/**
 * catalog.json's entries completed with their model type's traits, keys in ModelSpec's order and its defaults
 * filled, as ModelSpec.parse would give them. The file ships inside this package and is checked against the schema
 * by its test (catalog-check.ts), so every command's start does not parse it again.
 */
export function completeCatalog(entries: readonly CatalogEntry[]): ModelSpec[] {
  const keys = Object.keys(ModelSpec.shape) as (keyof ModelSpec)[]
  return entries.map((entry) => {
    const full = withTraits(entry)
    const spec: Record<string, unknown> = {}
    for (const key of keys) {
      const field = ModelSpec.shape[key]
      const value =
        full[key] === undefined && field instanceof z.ZodDefault ? field.parse(undefined) : full[key]
      if (value !== undefined) spec[key] = value
    }
    return spec as ModelSpec
  })
}

/**
 * Built-in models with the numbers of their published config.json. Sizes only: weights are never needed to
 * estimate memory or speed. Frozen all the way down: every caller shares these objects.
 */
export const MODEL_CATALOG: readonly ModelSpec[] = deepFreeze(completeCatalog(catalogData.models))

/** Every catalog model, in catalog order. */
export function listModels(): readonly ModelSpec[] {
  return MODEL_CATALOG
}

/** A catalog model by id or Hugging Face repository id, case-insensitively; undefined when none matches. */
export function findCatalogModel(idOrRepo: string): ModelSpec | undefined {
  const wanted = idOrRepo.trim().toLowerCase()
  const bare = wanted.includes('/') ? wanted.slice(wanted.lastIndexOf('/') + 1) : wanted
  return (
    MODEL_CATALOG.find((m) => m.id === wanted || m.name.toLowerCase() === wanted) ??
    MODEL_CATALOG.find((m) => m.name.toLowerCase().endsWith(`/${bare}`))
  )
}
