import { z } from 'zod'
import { ModelSpec } from '../schemas/model-spec.js'
import { withTraits } from './catalog.js'

/**
 * One model of catalog.json: the numbers of its published config.json (Hugging Face Hub, `name` is the
 * repository). The architecture (kind, MLP, norm, positions, biases) comes from its model type's traits.
 */
const CatalogModel = ModelSpec.omit({
  schemaVersion: true,
  source: true,
  kind: true,
  mlp: true,
  norm: true,
  positions: true,
  bias: true,
}).strict()

const CatalogFile = z.strictObject({ models: z.array(CatalogModel).min(1) })

/**
 * A catalog.json validated in full and completed through ModelSpec: what the shipped catalog must pass (its test
 * runs this), naming the model and the field where it does not.
 */
export function checkCatalog(data: unknown): ModelSpec[] {
  const parsed = CatalogFile.safeParse(data)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new Error(`model catalog.json is invalid at ${issue?.path.join('.')}: ${issue?.message}`)
  }
  const seen = new Set<string>()
  return parsed.data.models.map((entry) => {
    const spec = withTraits(entry)
    if (seen.has(entry.id)) throw new Error(`model catalog.json: duplicate id "${entry.id}"`)
    seen.add(entry.id)
    return ModelSpec.parse(spec)
  })
}
