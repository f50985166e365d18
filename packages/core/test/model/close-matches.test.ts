import { describe, expect, it } from 'vitest'
import { closeMatches } from '../../src/model/close-matches.js'

describe('closeMatches', () => {
  const ids = ['llama-2-7b', 'llama-2-13b', 'llama-3-8b', 'mistral-7b', 'gpt2', 'gpt2-xl']
  it('puts ids containing the query first, then near misspellings', () => {
    expect(closeMatches('gpt2', ids)).toEqual(['gpt2', 'gpt2-xl'])
    expect(closeMatches('mistrall-7b', ids)[0]).toBe('mistral-7b')
    expect(closeMatches('llama', ids)).toEqual(['llama-2-7b', 'llama-3-8b', 'llama-2-13b'])
  })
  it('returns nothing for something unrelated, and respects the limit', () => {
    expect(closeMatches('resnet50', ids)).toEqual([])
    expect(closeMatches('llama', ids, 1)).toHaveLength(1)
  })
})
