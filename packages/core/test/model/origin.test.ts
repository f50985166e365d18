import { describe, expect, it } from 'vitest'
import { findCatalogModel } from '../../src/model/catalog.js'
import { describeHubOrigin, describeWeights, modelOriginRows } from '../../src/model/origin.js'

const gpt2 = findCatalogModel('gpt2')
if (!gpt2) throw new Error('gpt2 is in the catalog')
const commit = '0123456789abcdef0123456789abcdef01234567'

describe('where a model came from', () => {
  it('names the repository, revision, short commit and the cache or Hub it was read from', () => {
    expect(
      describeHubOrigin({ ...gpt2, hub: { repo: 'org/m', revision: 'v1', commit, from: 'hf-cache' } }),
    ).toBe('org/m@v1 (commit 0123456789ab, read from the Hugging Face cache)')
    expect(
      describeHubOrigin({ ...gpt2, hub: { repo: 'org/m', revision: 'main', commit: null, from: 'hub' } }),
    ).toBe('org/m@main (commit not stated, read from the Hub)')
  })

  it('says whether the weights match the config', () => {
    const weights = { params: 1000, configParams: 1000, agrees: true, dtype: 'BF16', bytes: 2000, files: 2 }
    expect(describeWeights({ ...gpt2, weights: { ...weights, from: 'headers' } })).toBe(
      '1,000 parameters stored in BF16 (2 safetensors headers); matches the config',
    )
    expect(
      describeWeights({ ...gpt2, weights: { ...weights, params: 1200, agrees: false, from: 'index' } }),
    ).toBe(
      "1,200 parameters stored in BF16 (the safetensors index); the config implies 1,000; rigfit prices the config's architecture",
    )
  })

  it('adds no rows for a catalog model', () => {
    expect(modelOriginRows(gpt2)).toEqual([])
    expect(describeHubOrigin(gpt2)).toBeNull()
    expect(describeWeights(gpt2)).toBeNull()
  })
})
