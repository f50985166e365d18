import { describe, expect, it } from 'vitest'
import { completeCatalog, MODEL_CATALOG } from '../../src/model/catalog.js'
import catalogData from '../../src/model/catalog.json' with { type: 'json' }
import { checkCatalog } from '../../src/model/catalog-check.js'

type Entry = Record<string, unknown>
const entries = catalogData.models as Entry[]

describe('the shipped model catalog, checked here rather than on every start', () => {
  it('passes the full check, and what a start completes is exactly what the check parses, key order too', () => {
    expect(JSON.stringify(MODEL_CATALOG)).toBe(JSON.stringify(checkCatalog(catalogData)))
  })

  it('fills ModelSpec defaults as parsing does, for every entry and every field that has one', () => {
    for (const entry of entries) {
      for (const field of ['attentionDropout', 'hiddenDropout', 'hub', 'weights']) {
        const { [field]: _, ...without } = entry
        const data = { models: [without] }
        expect(JSON.stringify(completeCatalog(data.models as never)), `${entry.id} without ${field}`).toBe(
          JSON.stringify(checkCatalog(data)),
        )
      }
    }
  })

  it('names the model and the field of a broken entry', () => {
    const broken: [string, Entry[], RegExp][] = [
      ['a missing field', [{ ...entries[0], layers: undefined }], /invalid at models\.0\.layers/],
      ['a wrong type', [{ ...entries[1], hidden: '768' }], /invalid at models\.0\.hidden/],
      ['an unknown key', [{ ...entries[2], layerz: 3 }], /invalid at models\.0/],
      [
        'an unknown model type',
        [{ ...entries[0], modelType: 'no_such_type' }],
        /unknown model type "no_such_type"/,
      ],
      ['a duplicate id', [entries[0] as Entry, entries[0] as Entry], /duplicate id "gpt2"/],
    ]
    for (const [what, models, message] of broken)
      expect(() => checkCatalog({ models }), what).toThrow(message)
    expect(() => checkCatalog({ models: [] })).toThrow(/invalid at models/)
  })
})
