// Writes schemas/<name>.schema.json from the zod schemas in dist/ (run after build).
import { writeFileSync } from 'node:fs'
import { renderJsonSchemas } from '../dist/schemas/json-schema.js'

for (const [file, text] of Object.entries(renderJsonSchemas())) {
  writeFileSync(new URL(`../schemas/${file}`, import.meta.url), text)
  console.log(`wrote schemas/${file}`)
}
