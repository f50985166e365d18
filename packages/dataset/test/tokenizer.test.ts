import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isRigfitError } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { countDatasetTokens } from '../src/count-dataset.js'
import { tempDir, tinyBpeTokenizer, wordLevelTokenizer, writeJson, writeJsonl } from './helpers.js'

async function codeOf(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; suggestion?: string }> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  )
  if (!isRigfitError(error)) throw new Error(`expected a RigfitError, got ${String(error)}`)
  return { code: error.code, message: error.message, suggestion: error.suggestion }
}

describe('counting with a tokenizer.json', () => {
  it('applies BPE merges: the count is of merged tokens, not of characters or words', async () => {
    const dir = tempDir()
    const tokenizer = writeJson(join(dir, 'tokenizer.json'), tinyBpeTokenizer())
    // abab -> [abab]; ab -> [ab]; b -> [b]; aab -> [a][ab]; ababab -> [abab][ab]
    const data = writeJsonl(join(dir, 'bpe.jsonl'), [{ text: 'abab ab b' }, { text: 'aab ababab' }])
    const count = await countDatasetTokens(data, { tokenizer })
    expect(count).toMatchObject({ tokens: 7, examples: 2, method: 'tokenizer' })
  })

  it('leaves special tokens out even when the tokenizer adds them', async () => {
    const dir = tempDir()
    const json = {
      ...wordLevelTokenizer(),
      post_processor: {
        type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: '[UNK]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
        pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
        special_tokens: { '[UNK]': { id: '[UNK]', ids: [0], tokens: ['[UNK]'] } },
      },
    }
    const tokenizer = writeJson(join(dir, 'tokenizer.json'), json)
    const data = writeJsonl(join(dir, 'a.jsonl'), [{ text: 'the model' }, { text: 'fits' }])
    expect((await countDatasetTokens(data, { tokenizer })).tokens).toBe(3)
  })

  it('rejects a tokenizer.json that is missing, not JSON, or not a tokenizer, naming the file', async () => {
    const dir = tempDir()
    const data = writeJsonl(join(dir, 'a.jsonl'), [{ text: 'the model' }])
    const missing = join(dir, 'absent', 'tokenizer.json')
    const absent = await codeOf(countDatasetTokens(data, { tokenizer: missing }))
    expect(absent.code).toBe('E_DATASET_TOKENIZER')
    expect(absent.message).toContain(missing)

    const truncated = join(dir, 'truncated.json')
    writeFileSync(truncated, JSON.stringify(wordLevelTokenizer()).slice(0, 60))
    const notJson = await codeOf(countDatasetTokens(data, { tokenizer: truncated }))
    expect(notJson).toMatchObject({ code: 'E_DATASET_TOKENIZER' })
    expect(notJson.message).toMatch(/truncated\.json: the tokenizer is not valid JSON/)

    const wrong = writeJson(join(dir, 'wrong.json'), { model: { type: 'NoSuchModel' }, decoder: null })
    const unusable = await codeOf(countDatasetTokens(data, { tokenizer: wrong }))
    expect(unusable.message).toMatch(/wrong\.json: not a usable Hugging Face tokenizer/)
    expect(unusable.suggestion).toMatch(/4 bytes per token/)
  })

  it('rejects a broken tokenizer_config.json beside the tokenizer, and reads a good one', async () => {
    const dir = tempDir()
    const tokenizer = writeJson(join(dir, 'tokenizer.json'), wordLevelTokenizer())
    const data = writeJsonl(join(dir, 'a.jsonl'), [{ text: 'the model' }])
    writeFileSync(join(dir, 'tokenizer_config.json'), '{"model_max_length": ')
    expect((await codeOf(countDatasetTokens(data, { tokenizer }))).message).toContain('tokenizer_config.json')
    writeJson(join(dir, 'tokenizer_config.json'), {
      model_max_length: 512,
      clean_up_tokenization_spaces: false,
    })
    expect((await countDatasetTokens(data, { tokenizer })).tokens).toBe(2)
  })
})
