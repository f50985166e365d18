import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { renderJsonSchemas } from '../../src/schemas/json-schema.js'

describe('generated JSON Schema files', () => {
  for (const [file, text] of Object.entries(renderJsonSchemas())) {
    it(`schemas/${file} is current (run \`pnpm gen:schemas\` when this fails)`, () => {
      const committed = readFileSync(new URL(`../../schemas/${file}`, import.meta.url), 'utf8')
      expect(committed).toBe(text)
    })
  }
})
