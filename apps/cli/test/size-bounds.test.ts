import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

// Each field of a config may be in range while their product is not; such a config must be refused with a
// message that names the file, not estimated.
const work = mkdtempSync(join(tmpdir(), 'rigfit-bounds-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const base = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 64,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  intermediate_size: 128,
  vocab_size: 100,
  max_position_embeddings: 512,
}

function config(name: string, text: string): string {
  const path = join(work, name)
  writeFileSync(path, text)
  return path
}

const estimateOf = (path: string) =>
  rigfit(['estimate', '--model', path, '--gpu', 'RTX 4090', '--seq', '256', '--micro-batch', '1'])

describe('sanity bounds and messages on model configs', () => {
  it.each([
    // hidden × ffn × layers: about 8 × 10^18 parameters, each field within its own range.
    [
      {
        hidden_size: 1_000_000,
        intermediate_size: 4_000_000,
        num_hidden_layers: 1_000_000,
        num_attention_heads: 8,
      },
    ],
    [
      {
        hidden_size: 10_000_000,
        intermediate_size: 10_000_000,
        num_hidden_layers: 10_000,
        num_attention_heads: 8,
      },
    ],
    [{ hidden_size: 10_000_000, vocab_size: 10_000_000, num_attention_heads: 8, intermediate_size: 8 }],
  ])('a config whose sizes multiply past 10^14 parameters is refused (%o)', (fields) => {
    const path = config('huge.json', JSON.stringify({ ...base, ...fields }))
    const run = estimateOf(path)
    expect(run.status).toBe(3)
    expect(run.stderr).toContain('E_MODEL_TOO_LARGE')
    expect(run.stderr).toContain(path)
    expect(run.stderr).toMatch(/above the 1\.00 × 10\^14 rigfit models/)
  })

  it('a configuration needing more than 2^50 bytes of memory is refused', () => {
    // About 8.4 × 10^13 parameters: under the parameter bound, over a pebibyte of training state.
    const fields = {
      hidden_size: 1_000_000,
      intermediate_size: 1_000_000,
      num_hidden_layers: 12,
      num_attention_heads: 8,
    }
    const path = config('vast.json', JSON.stringify({ ...base, ...fields }))
    const run = estimateOf(path)
    expect(run.status).toBe(3)
    expect(run.stderr).toContain('E_MEMORY_TOO_LARGE')
  })

  it('a size of 1e400 is named as too large to represent, not "null"', () => {
    const path = config('inf.json', JSON.stringify(base).replace('"hidden_size":64', '"hidden_size":1e400'))
    const run = estimateOf(path)
    expect(run.status).toBe(3)
    expect(run.stderr).toContain('"hidden_size"')
    expect(run.stderr).toContain('too large to represent')
    expect(run.stderr).not.toContain('got null')
  })

  it('a config.json with a UTF-8 byte-order mark is read like one without', () => {
    const plain = estimateOf(config('plain.json', JSON.stringify(base)))
    const bom = estimateOf(config('bom.json', `\uFEFF${JSON.stringify(base)}`))
    expect(plain.status).toBe(0)
    expect(bom.status).toBe(0)
    expect(bom.stdout.replaceAll('bom.json', 'X')).toBe(plain.stdout.replaceAll('plain.json', 'X'))
  })
})
