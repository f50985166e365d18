import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findTokenizer } from '../src/find-tokenizer.js'

const exists = (files: string[]) => (path: string) => files.includes(path)

describe('findTokenizer', () => {
  it('takes an explicit tokenizer.json as given, even one that does not exist (loading names it)', () => {
    expect(findTokenizer({ tokenizer: 'tok/tokenizer.json', model: 'm/config.json' }, exists([]))).toBe(
      'tok/tokenizer.json',
    )
  })

  it('reads an explicit folder as the tokenizer.json inside it', () => {
    expect(findTokenizer({ tokenizer: 'models/llama' }, exists([]))).toBe(
      join('models/llama', 'tokenizer.json'),
    )
  })

  it('finds the tokenizer.json beside a model config.json, only when it is there', () => {
    const beside = join('models/qwen', 'tokenizer.json')
    expect(findTokenizer({ model: 'models/qwen/config.json' }, exists([beside]))).toBe(beside)
    expect(findTokenizer({ model: 'models/qwen/config.json' }, exists([]))).toBeNull()
  })

  it('returns null for a catalog model id or no sources at all', () => {
    expect(findTokenizer({ model: 'llama-3.1-8b' }, exists(['tokenizer.json']))).toBeNull()
    expect(findTokenizer({}, exists([]))).toBeNull()
    expect(findTokenizer({ tokenizer: '  ' }, exists([]))).toBeNull()
  })
})
