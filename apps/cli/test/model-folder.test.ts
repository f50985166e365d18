import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { elementsOf, llamaTensors, SMALL_LLAMA_CONFIG, writeModelFolder } from './helpers/model-folder.js'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

// A downloaded model folder: config.json beside safetensors weights whose headers the test writes. rigfit reads the
// headers only (never the weights) for the exact parameter count and stored dtype, and checks it against the
// count the config's architecture implies.

const work = mkdtempSync(join(tmpdir(), 'rigfit-model-folder-'))
const PLAN = ['plan', '--gpu', 'RTX 4090', '--mode', 'balanced', '--seq', '128']
const configTensors = llamaTensors(SMALL_LLAMA_CONFIG)
const exact = elementsOf(configTensors)

describe('--model ./folder/ with safetensors weights', () => {
  it.each([1, 2, 3])(
    'counts the parameters of %i shard(s) from their headers, equal to the config count',
    (shards) => {
      const { dir, bytes } = writeModelFolder(join(work, `shards-${shards}`), { shards })
      const plan = rigfitJson([...PLAN, '--model', `${dir}/`])
      expect(plan.model.weights).toEqual({
        params: exact,
        configParams: exact,
        agrees: true,
        dtype: 'BF16',
        bytes,
        from: 'headers',
        files: shards,
      })
      expect(plan.params.total).toBe(exact)
    },
  )

  it('with only the index downloaded, counts from its byte total over torch_dtype', () => {
    const { dir, bytes } = writeModelFolder(join(work, 'index-only'), { shards: 2 })
    rmSync(join(dir, 'model-00002-of-00002.safetensors'))
    const plan = rigfitJson([...PLAN, '--model', dir])
    expect(plan.model.weights).toMatchObject({
      params: bytes / 2,
      from: 'index',
      dtype: 'BF16',
      agrees: true,
    })
  })

  it('reads F32 weights as F32', () => {
    const { dir } = writeModelFolder(join(work, 'f32'), { tensors: llamaTensors(SMALL_LLAMA_CONFIG, 'F32') })
    expect(rigfitJson([...PLAN, '--model', dir]).model.weights).toMatchObject({ dtype: 'F32', params: exact })
  })

  it('warns when the weights hold other tensors than the config describes, and prices the config', () => {
    // A value head added to the checkpoint: 10% more parameters than the architecture.
    const added = Math.round(exact / 10)
    const extra: [string, string, number[]] = ['v_head.weight', 'BF16', [added]]
    const { dir } = writeModelFolder(join(work, 'extra'), { tensors: [...configTensors, extra] })
    const result = rigfit([...PLAN, '--model', dir, '--json'])
    expect(result.status).toBe(0)
    const plan = JSON.parse(result.stdout)
    expect(plan.model.weights).toMatchObject({ agrees: false, configParams: exact })
    expect(plan.params.total).toBe(exact)
    expect(result.stderr).toContain(
      `Warning: the safetensors weights of ${join(dir, 'config.json')} hold ${exact + added} parameters, the config implies ${exact}`,
    )
    const text = rigfit(['estimate', '--model', dir, '--seq', '128', '--micro-batch', '1'])
    expect(text.stdout).toMatch(
      /Weights\s+[\d,]+ parameters stored in BF16 \(1 safetensors header\); the config implies/,
    )
  })

  it('shows the weights beside the model in the estimate', () => {
    const { dir } = writeModelFolder(join(work, 'shown'))
    const text = rigfit(['estimate', '--model', dir, '--seq', '128', '--micro-batch', '1'])
    expect(text.status).toBe(0)
    expect(text.stdout).toContain(
      `${exact.toLocaleString('en-US')} parameters stored in BF16 (1 safetensors header); matches the config`,
    )
  })

  it.each([
    ['a header length past the end of the file', Buffer.from([0xff, 0xff, 0, 0, 0, 0, 0, 0, 0x7b])],
    ['a file shorter than the length field', Buffer.from([1, 2, 3])],
    [
      'a header that is not JSON',
      Buffer.concat([Buffer.from([4, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('nope')]),
    ],
  ])('refuses %s, naming the file, exit 3', (_, bytes) => {
    const { dir } = writeModelFolder(join(work, `broken-${bytes.length}-${bytes[0]}`))
    writeFileSync(join(dir, 'model.safetensors'), bytes)
    const result = rigfit([...PLAN, '--model', dir])
    expect(result.status).toBe(3)
    expect(result.stderr).toContain('E_SAFETENSORS')
    expect(result.stderr).toContain(join(dir, 'model.safetensors'))
  })

  it('refuses an index naming a shard outside the folder', () => {
    const { dir } = writeModelFolder(join(work, 'escape'), { shards: 2 })
    writeFileSync(
      join(dir, 'model.safetensors.index.json'),
      JSON.stringify({ metadata: { total_size: 8 }, weight_map: { a: '../elsewhere.safetensors' } }),
    )
    const result = rigfit([...PLAN, '--model', dir])
    expect(result.status).toBe(3)
    expect(result.stderr).toContain('E_SAFETENSORS')
  })

  it('refuses a folder whose config is an architecture rigfit cannot price, naming it and the nearest one', () => {
    const { dir } = writeModelFolder(join(work, 'moe'), {
      config: { model_type: 'qwen3_moe', moe_intermediate_size: 64, num_experts: 8, num_experts_per_tok: 2 },
    })
    const result = rigfit([...PLAN, '--model', dir])
    expect(result.status).toBe(3)
    expect(result.stderr).toContain('E_MODEL_UNSUPPORTED')
    expect(result.stderr).toContain('"qwen3_moe"')
    expect(result.stderr).toContain('nearest supported model type is "qwen3"')
  })
})
