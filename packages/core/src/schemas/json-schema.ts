import { z } from 'zod'
import { PUBLIC_SCHEMAS } from './registry.js'

/** JSON Schema text for every public schema, keyed by file name. Deterministic, so a test can diff it. */
export function renderJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, schema] of Object.entries(PUBLIC_SCHEMAS)) {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' })
    out[`${name}.schema.json`] =
      `${JSON.stringify({ $id: `https://rigfit.dev/schemas/${name}.schema.json`, ...json }, null, 2)}\n`
  }
  return out
}
