import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitOf, type FakeHub, filesUnder, isolatedHome, startFakeHub } from './helpers/fake-hub.js'
import { elementsOf, llamaTensors, SMALL_LLAMA_CONFIG, writeSafetensors } from './helpers/model-folder.js'
import { type CliRun, rigfitAsync, rigfitJson } from './helpers/run-cli.js'

// `--model org/name[@revision]` end to end: the CLI as a user runs it, against a local server that answers as the
// Hub's resolve endpoint does, then offline from rigfit's cache and from a Hugging Face cache folder.

const QWEN = 'Qwen/Qwen2.5-7B-Instruct'
const QWEN_CONFIG = readFileSync(
  fileURLToPath(new URL('./fixtures/hub/Qwen2.5-7B-Instruct.config.json', import.meta.url)),
  'utf8',
)
const WORD_TOKENIZER = readFileSync(
  fileURLToPath(new URL('./fixtures/word-tokenizer/tokenizer.json', import.meta.url)),
  'utf8',
)
const QWEN_COMMIT = commitOf(QWEN_CONFIG)
const TAGGED_COMMIT = commitOf('v1.0')
const GATED = 'acme/gated-llama'
const SECRET = 'hf_FakeSecretToken1234567890abcdef'
const GPU = ['--gpu', 'RTX 4090']

let hub: FakeHub
beforeAll(async () => {
  hub = await startFakeHub({
    [QWEN]: {
      files: { 'config.json': QWEN_CONFIG, 'tokenizer.json': WORD_TOKENIZER },
      commit: QWEN_COMMIT,
      refs: { 'v1.0': TAGGED_COMMIT },
    },
    [GATED]: {
      files: { 'config.json': JSON.stringify(SMALL_LLAMA_CONFIG) },
      commit: commitOf(GATED),
      token: SECRET,
    },
  })
})
afterAll(() => hub.close())

function json(run: CliRun) {
  if (run.status !== 0) throw new Error(`exited ${run.status}: ${run.stdout}\n${run.stderr}`)
  return JSON.parse(run.stdout)
}

const estimateArgs = (model: string) => [
  'estimate',
  '--model',
  model,
  '--seq',
  '2048',
  '--micro-batch',
  '1',
  ...GPU,
]

describe('--model org/name against the Hub', () => {
  const home = isolatedHome('')

  it('estimate reads config.json through the resolve endpoint and prices it as the same architecture', async () => {
    home.env.HF_ENDPOINT = hub.url
    const before = hub.requests.length
    const result = json(await rigfitAsync([...estimateArgs(QWEN), '--json'], undefined, home.env))
    // The Instruct model has the base model's architecture, which the catalog holds.
    const catalog = rigfitJson(estimateArgs('qwen2.5-7b'))
    expect(result.params).toEqual(catalog.params)
    expect(result.perDevice.total).toBe(catalog.perDevice.total)
    const seen = hub.requests.slice(before)
    expect(seen[0]).toMatchObject({ server: 'hub', path: `/${QWEN}/resolve/main/config.json` })
    expect(seen[1]?.server).toBe('cdn')
  })

  it("keeps the config in rigfit's cache, keyed by commit, with refs/main naming it", () => {
    const repoDir = join(home.rigfitHub, 'models--Qwen--Qwen2.5-7B-Instruct')
    expect(readFileSync(join(repoDir, 'refs', 'main'), 'utf8')).toBe(QWEN_COMMIT)
    expect(readFileSync(join(repoDir, 'snapshots', QWEN_COMMIT, 'config.json'), 'utf8')).toBe(QWEN_CONFIG)
  })

  it('says where the numbers came from', async () => {
    const text = await rigfitAsync(estimateArgs(QWEN), undefined, { ...home.env, HF_HUB_OFFLINE: '1' })
    expect(text.status).toBe(0)
    expect(text.stdout).toContain(
      `Hub       ${QWEN}@main (commit ${QWEN_COMMIT.slice(0, 12)}, read from rigfit's cache)`,
    )
    const plan = await rigfitAsync(['plan', '--model', QWEN, ...GPU], undefined, {
      ...home.env,
      HF_HUB_OFFLINE: '1',
    })
    expect(plan.stdout).toMatch(
      new RegExp(`Hub\\s+${QWEN}@main \\(commit ${QWEN_COMMIT.slice(0, 12)}, read from rigfit's cache\\)`),
    )
  })

  it('plan, export and report record the Hub id and commit, online and then offline from the cache', async () => {
    for (const offline of ['', '1']) {
      const env = { ...home.env, HF_HUB_OFFLINE: offline }
      const before = hub.requests.length
      const plan = json(
        await rigfitAsync(['plan', '--model', QWEN, '--method', 'lora', ...GPU, '--json'], undefined, env),
      )
      expect(plan.model).toMatchObject({ id: QWEN, name: QWEN, source: 'config', modelType: 'qwen2' })
      expect(plan.model.hub).toEqual({
        repo: QWEN,
        revision: 'main',
        commit: QWEN_COMMIT,
        from: 'rigfit-cache',
      })

      const out = join(home.root, `export-${offline || 'online'}`)
      const exported = await rigfitAsync(
        [
          'export',
          '--format',
          'hf',
          '--mode',
          'balanced',
          '--model',
          QWEN,
          '--method',
          'lora',
          ...GPU,
          '--out',
          out,
        ],
        undefined,
        env,
      )
      expect(exported.status, exported.stderr).toBe(0)
      const modelArgs = JSON.parse(readFileSync(join(out, 'model_args.json'), 'utf8'))
      expect(modelArgs).toMatchObject({ model_name_or_path: QWEN, model_revision: QWEN_COMMIT })
      const adapter = JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8'))
      expect(adapter).toMatchObject({ base_model_name_or_path: QWEN, revision: QWEN_COMMIT })

      const page = join(home.root, `report-${offline || 'online'}.html`)
      const report = await rigfitAsync(
        ['report', '--model', QWEN, '--mode', 'balanced', ...GPU, '--out', page],
        undefined,
        env,
      )
      expect(report.status, report.stderr).toBe(0)
      expect(readFileSync(page, 'utf8')).toContain(`${QWEN}@main (commit ${QWEN_COMMIT.slice(0, 12)}`)
      // The config is cached: neither run went to the Hub.
      expect(hub.requests.length).toBe(before)
    }
  })

  it('@revision reads that tag and names it', async () => {
    const plan = json(
      await rigfitAsync(['plan', '--model', `${QWEN}@v1.0`, ...GPU, '--json'], undefined, home.env),
    )
    expect(plan.model.id).toBe(`${QWEN}@v1.0`)
    expect(plan.model.hub).toEqual({ repo: QWEN, revision: 'v1.0', commit: TAGGED_COMMIT, from: 'hub' })
    expect(hub.requests.some((r) => r.path === `/${QWEN}/resolve/v1.0/config.json`)).toBe(true)
  })

  it("--dataset counts with the model's tokenizer.json, fetched once beside the config", async () => {
    const data = join(home.root, 'train.txt')
    writeFileSync(data, 'the model fits on one gpu\n'.repeat(100))
    const plan = json(
      await rigfitAsync(['plan', '--model', QWEN, '--dataset', data, ...GPU, '--json'], undefined, home.env),
    )
    expect(plan.workload.dataset).toMatchObject({ method: 'tokenizer', tokens: 600 })
    expect(plan.workload.dataset.tokenizer).toBe(
      join(home.rigfitHub, 'models--Qwen--Qwen2.5-7B-Instruct', 'snapshots', QWEN_COMMIT, 'tokenizer.json'),
    )
  })
})

describe('a gated repository and the token', () => {
  it('is refused without a token, with how to get access, exit 7', async () => {
    const home = isolatedHome(hub.url)
    const result = await rigfitAsync(estimateArgs(GATED), undefined, home.env)
    expect(result.status).toBe(7)
    expect(result.stderr).toContain('E_HUB_GATED')
    expect(result.stderr).toContain(`${hub.url}/${GATED}`)
    expect(result.stderr).toMatch(/accept the licence/)
    expect(result.stderr).toContain('HF_TOKEN')
  })

  it('a wrong token is refused (403) without repeating it', async () => {
    const home = isolatedHome(hub.url, { HF_TOKEN: 'hf_wrong_token_value' })
    const result = await rigfitAsync([...estimateArgs(GATED), '--json'], undefined, home.env)
    expect(result.status).toBe(7)
    expect(JSON.parse(result.stdout).error).toMatchObject({ code: 'E_HUB_GATED', details: { status: 403 } })
    expect(result.stdout + result.stderr).not.toContain('hf_wrong_token_value')
  })

  it.each([
    ['HF_TOKEN', (home: ReturnType<typeof isolatedHome>) => ({ ...home.env, HF_TOKEN: SECRET })],
    [
      'the token file in HF_HOME',
      (home: ReturnType<typeof isolatedHome>) => {
        mkdirSync(home.hfHome, { recursive: true })
        writeFileSync(join(home.hfHome, 'token'), `${SECRET}\n`)
        return home.env
      },
    ],
  ])('opens with %s, sent to the Hub only, and written nowhere', async (_, envOf) => {
    const home = isolatedHome(hub.url)
    const env = envOf(home)
    const before = hub.requests.length
    const plan = await rigfitAsync(['plan', '--model', GATED, ...GPU, '--json'], undefined, env)
    expect(plan.status, plan.stderr).toBe(0)
    const out = join(home.root, 'export')
    const exported = await rigfitAsync(
      ['export', '--format', 'hf', '--mode', 'balanced', '--model', GATED, ...GPU, '--out', out],
      undefined,
      env,
    )
    expect(exported.status, exported.stderr).toBe(0)
    const seen = hub.requests.slice(before)
    expect(seen.filter((r) => r.server === 'hub').every((r) => r.authorization === `Bearer ${SECRET}`)).toBe(
      true,
    )
    // The CDN is another origin: it never sees the token.
    expect(seen.filter((r) => r.server === 'cdn').map((r) => r.authorization)).toEqual([undefined])
    for (const output of [plan.stdout, plan.stderr, exported.stdout, exported.stderr])
      expect(output).not.toContain(SECRET)
    const written = filesUnder(home.root).filter((f) => !f.path.endsWith(join('hf', 'token')))
    expect(written.some((f) => f.path.endsWith('model_args.json'))).toBe(true)
    for (const file of written) expect(file.text, file.path).not.toContain(SECRET)
  })
})

describe('a Hugging Face cache folder', () => {
  const repo = 'acme/small-llama'
  const commit = commitOf(repo)

  /** The layout huggingface_hub writes: blobs by hash, snapshot files linking to them, refs/main naming the commit. */
  function hfCache(hfHome: string) {
    const repoDir = join(hfHome, 'hub', 'models--acme--small-llama')
    const snapshot = join(repoDir, 'snapshots', commit)
    mkdirSync(join(repoDir, 'blobs'), { recursive: true })
    mkdirSync(snapshot, { recursive: true })
    mkdirSync(join(repoDir, 'refs'))
    writeFileSync(join(repoDir, 'refs', 'main'), commit)
    writeFileSync(join(repoDir, 'blobs', 'cfg'), JSON.stringify(SMALL_LLAMA_CONFIG))
    symlinkSync(join('..', '..', 'blobs', 'cfg'), join(snapshot, 'config.json'))
    writeSafetensors(join(repoDir, 'blobs', 'weights'), llamaTensors(SMALL_LLAMA_CONFIG))
    symlinkSync(join('..', '..', 'blobs', 'weights'), join(snapshot, 'model.safetensors'))
  }

  it('is read first, offline, with the weights its snapshot holds', async () => {
    const home = isolatedHome(hub.url, { HF_HUB_OFFLINE: '1' })
    hfCache(home.hfHome)
    const before = hub.requests.length
    const plan = json(
      await rigfitAsync(['plan', '--model', repo, ...GPU, '--seq', '128', '--json'], undefined, home.env),
    )
    expect(plan.model.hub).toEqual({ repo, revision: 'main', commit, from: 'hf-cache' })
    expect(plan.model.weights).toMatchObject({
      params: elementsOf(llamaTensors(SMALL_LLAMA_CONFIG)),
      agrees: true,
    })
    expect(hub.requests.length).toBe(before)
  })

  it('HF_HUB_CACHE points at it directly, and a commit names a snapshot', async () => {
    const home = isolatedHome(hub.url, { HF_HUB_OFFLINE: '1' })
    hfCache(home.hfHome)
    const env = { ...home.env, HF_HOME: join(home.root, 'elsewhere'), HF_HUB_CACHE: join(home.hfHome, 'hub') }
    const plan = json(
      await rigfitAsync(
        ['plan', '--model', `${repo}@${commit}`, ...GPU, '--seq', '128', '--json'],
        undefined,
        env,
      ),
    )
    expect(plan.model.hub).toMatchObject({ revision: commit, commit, from: 'hf-cache' })
  })
})
