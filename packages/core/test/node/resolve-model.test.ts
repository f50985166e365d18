import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isRigfitError, type RigfitError } from '../../src/errors.js'
import { resolveModel } from '../../src/node/resolve-model.js'

async function failure(query: string): Promise<RigfitError> {
  try {
    await resolveModel(query)
  } catch (error) {
    if (isRigfitError(error)) return error
    throw error
  }
  throw new Error('expected a RigfitError')
}

const dir = mkdtempSync(join(tmpdir(), 'rigfit-resolve-'))
const config = {
  model_type: 'gpt2',
  n_embd: 768,
  n_layer: 12,
  n_head: 12,
  vocab_size: 50257,
  n_positions: 1024,
}
writeFileSync(join(dir, 'config.json'), JSON.stringify(config))
writeFileSync(join(dir, 'broken.json'), '{"model_type": "gpt2",')

describe('resolveModel', () => {
  it('resolves catalog ids and Hugging Face repository ids', async () => {
    expect((await resolveModel('gpt2')).id).toBe('gpt2')
    expect((await resolveModel('mistralai/Mistral-7B-v0.1')).id).toBe('mistral-7b')
  })

  it('reads a config.json by path or from a model directory', async () => {
    const byFile = await resolveModel(join(dir, 'config.json'))
    expect(byFile).toMatchObject({ source: 'config', hidden: 768 })
    expect((await resolveModel(dir)).id).toBe(join(dir, 'config.json'))
  })

  it('lists close catalog ids for an unknown id', async () => {
    const error = await failure('lama-2-7b')
    expect(error.code).toBe('E_MODEL_UNKNOWN')
    expect(error.suggestion).toContain('llama-2-7b')
    expect((error.details as { closeMatches: string[] }).closeMatches[0]).toBe('llama-2-7b')
  })

  it('names the file when it is missing or not JSON', async () => {
    expect((await failure(join(dir, 'missing.json'))).message).toContain('missing.json: no such file')
    const broken = await failure(join(dir, 'broken.json'))
    expect(broken.message).toContain('broken.json: is not valid JSON')
    expect((await failure(tmpdir())).message).toContain('config.json')
    expect((await failure('  ')).kind).toBe('usage')
  })

  it('repeats none of a file that is not JSON, and refuses one too large to be a config', async () => {
    writeFileSync(join(dir, 'secret.json'), 'root:s3cr3t-hash:20202\n')
    const secret = await failure(join(dir, 'secret.json'))
    expect(secret.message).toContain('secret.json: is not valid JSON')
    expect(JSON.stringify(secret)).not.toContain('s3cr3t')
    writeFileSync(join(dir, 'huge.json'), `{"pad": "${' '.repeat(5 * 1024 * 1024)}"}`)
    expect((await failure(join(dir, 'huge.json'))).message).toMatch(
      /huge\.json: cannot be read \(.*over the limit/,
    )
  })
})
