import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitOf, type FakeHub, isolatedHome, MISBEHAVING, startFakeHub } from './helpers/fake-hub.js'
import { SMALL_LLAMA_CONFIG } from './helpers/model-folder.js'
import { rigfitAsync } from './helpers/run-cli.js'

// Each way the Hub (or the way to it) can fail has its own error code and exit code: a name that does not exist is
// the user's input (3), access, network, time and response problems are I/O (7), a malformed flag or variable is
// usage (2). Nothing is written when a model cannot be read.

const DEEPSEEK = {
  model_type: 'deepseek_v3',
  hidden_size: 7168,
  num_hidden_layers: 61,
  num_attention_heads: 128,
  intermediate_size: 18432,
  moe_intermediate_size: 2048,
  n_routed_experts: 256,
  n_shared_experts: 1,
  num_experts_per_tok: 8,
  kv_lora_rank: 512,
  vocab_size: 129280,
  max_position_embeddings: 163840,
  hidden_act: 'silu',
  rms_norm_eps: 1e-6,
}

let hub: FakeHub
beforeAll(async () => {
  hub = await startFakeHub({
    'acme/small-llama': {
      files: { 'config.json': JSON.stringify(SMALL_LLAMA_CONFIG) },
      commit: commitOf('small'),
    },
    'acme/weights-only': { files: { 'model.safetensors': '' }, commit: commitOf('weights') },
    'deepseek-ai/DeepSeek-V3': { files: { 'config.json': JSON.stringify(DEEPSEEK) }, commit: commitOf('ds') },
  })
})
afterAll(() => hub.close())

const ESTIMATE = ['estimate', '--seq', '128', '--micro-batch', '1', '--gpu', 'RTX 4090']

async function failure(model: string, extra: NodeJS.ProcessEnv = {}, flags: string[] = []) {
  const home = isolatedHome(hub.url, extra)
  const result = await rigfitAsync([...ESTIMATE, '--model', model, ...flags, '--json'], undefined, home.env)
  const error = JSON.parse(result.stdout).error
  return { status: result.status, error, home }
}

describe('Hub errors by kind', () => {
  it.each([
    ['a repository that does not exist', 'acme/no-such-model', 3, 'E_HUB_NOT_FOUND'],
    ['a revision that does not exist', 'acme/small-llama@no-such-tag', 3, 'E_HUB_REVISION_NOT_FOUND'],
    ['a repository without config.json', 'acme/weights-only', 3, 'E_HUB_NO_CONFIG'],
    ['an HTML page instead of the file', MISBEHAVING.html, 3, 'E_HUB_MALFORMED'],
    ['a response without Content-Length that never ends', MISBEHAVING.huge, 7, 'E_HUB_TOO_LARGE'],
    ['a response stating a gigabyte', MISBEHAVING.hugeStated, 7, 'E_HUB_TOO_LARGE'],
    ['a redirect loop', MISBEHAVING.loop, 7, 'E_HUB_REDIRECT_LOOP'],
    ['a bad revision', 'acme/small-llama@../main', 2, 'E_HUB_REVISION'],
  ])('%s (%s): exit %i, %s', async (_, model, status, code) => {
    const { status: exit, error } = await failure(model)
    expect(error.code).toBe(code)
    expect(exit).toBe(status)
    expect(error.suggestion).toBeTruthy()
  })

  it('a 404 suggests close names from the catalog and the caches', async () => {
    const home = isolatedHome(hub.url)
    // A model the user downloaded earlier, in the Hugging Face cache.
    mkdirSync(join(home.hfHome, 'hub', 'models--acme--small-llama'), { recursive: true })
    const typo = await rigfitAsync([...ESTIMATE, '--model', 'acme/smal-llama', '--json'], undefined, home.env)
    expect(typo.status).toBe(3)
    expect(JSON.parse(typo.stdout).error.details.closeMatches).toContain('acme/small-llama')
    const catalogTypo = await rigfitAsync(
      [...ESTIMATE, '--model', 'Qwen/Qwen2.5-7B-Instrct'],
      undefined,
      home.env,
    )
    expect(catalogTypo.stderr).toContain('Did you mean Qwen/Qwen2.5-7B')
  })

  it('a slow Hub ends at --timeout, naming it and how to wait longer, exit 7', async () => {
    const { status, error } = await failure(MISBEHAVING.slow, {}, ['--timeout', '1'])
    expect(status).toBe(7)
    expect(error.code).toBe('E_HUB_TIMEOUT')
    expect(error.message).toContain('within 1 s')
    expect(error.suggestion).toContain('--timeout')
  })

  it('offline with nothing cached: exit 7, naming both caches, and no request made', async () => {
    const before = hub.requests.length
    const { status, error, home } = await failure('acme/small-llama', { HF_HUB_OFFLINE: '1' })
    expect(status).toBe(7)
    expect(error.code).toBe('E_HUB_OFFLINE')
    expect(error.message).toContain(join(home.hfHome, 'hub'))
    expect(error.message).toContain(home.rigfitHub)
    expect(hub.requests.length).toBe(before)
  })

  it('an unreachable endpoint: exit 7, suggesting HF_HUB_OFFLINE', async () => {
    const { status, error } = await failure('acme/small-llama', { HF_ENDPOINT: 'http://127.0.0.1:9' })
    expect(status).toBe(7)
    expect(error.code).toBe('E_HUB_UNREACHABLE')
    expect(error.suggestion).toContain('HF_HUB_OFFLINE=1')
  })

  it('HF_ENDPOINT that is not an http(s) URL: exit 2, without echoing it', async () => {
    const { status, error } = await failure('acme/small-llama', { HF_ENDPOINT: 'ftp://user:pw@mirror' })
    expect(status).toBe(2)
    expect(error.code).toBe('E_HUB_ENDPOINT')
    expect(JSON.stringify(error)).not.toContain('pw@')
  })

  it('an architecture rigfit cannot price is refused naming its model_type and the nearest supported one', async () => {
    const { status, error } = await failure('deepseek-ai/DeepSeek-V3')
    expect(status).toBe(3)
    expect(error.code).toBe('E_MODEL_UNSUPPORTED')
    expect(error.message).toContain('"deepseek_v3"')
    expect(error.suggestion).toMatch(/nearest supported model type is "[a-z0-9_]+"/)
  })

  it('a mirror that names no commit still works, and nothing is cached under a branch name', async () => {
    const mirror = await startFakeHub({
      [MISBEHAVING.noCommit]: { files: { 'config.json': JSON.stringify(SMALL_LLAMA_CONFIG) }, commit: '' },
    })
    try {
      const home = isolatedHome(mirror.url)
      const plan = await rigfitAsync(
        ['plan', '--model', MISBEHAVING.noCommit, '--gpu', 'RTX 4090', '--seq', '128', '--json'],
        undefined,
        home.env,
      )
      expect(plan.status, plan.stderr).toBe(0)
      expect(JSON.parse(plan.stdout).model.hub).toEqual({
        repo: MISBEHAVING.noCommit,
        revision: 'main',
        commit: null,
        from: 'hub',
      })
      expect(existsSync(home.rigfitHub)).toBe(false)
    } finally {
      await mirror.close()
    }
  })
})

describe('every command that takes --model reads Hub ids', () => {
  const commands: [string, string[]][] = [
    ['estimate', [...ESTIMATE]],
    ['plan', ['plan', '--gpu', 'RTX 4090']],
    ['analyze', ['analyze', '--gpu', 'RTX 4090']],
    ['export', ['export', '--format', 'hf', '--mode', 'balanced', '--gpu', 'RTX 4090']],
    ['report', ['report', '--mode', 'balanced', '--gpu', 'RTX 4090']],
    ['explain', ['explain', 'microBatch', '--gpu', 'RTX 4090']],
  ]
  it.each(commands)(
    '%s --model org/name goes to the Hub (a 404 there is E_HUB_NOT_FOUND, exit 3, nothing written)',
    async (_, args) => {
      const home = isolatedHome(hub.url)
      const out = join(home.root, 'out')
      const extra =
        args[0] === 'export' ? ['--out', out] : args[0] === 'report' ? ['--out', `${out}.html`] : []
      const before = hub.requests.length
      const result = await rigfitAsync(
        [...args, ...extra, '--model', 'acme/missing-model'],
        home.root,
        home.env,
      )
      expect(result.status, result.stderr).toBe(3)
      expect(result.stderr).toContain('E_HUB_NOT_FOUND')
      expect(hub.requests.slice(before).map((r) => r.path)).toContain(
        '/acme/missing-model/resolve/main/config.json',
      )
      expect(existsSync(out)).toBe(false)
      expect(existsSync(`${out}.html`)).toBe(false)
    },
  )
})
