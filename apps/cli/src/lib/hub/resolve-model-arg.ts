import { statSync } from 'node:fs'
import { join } from 'node:path'
import {
  closeMatches,
  type HubModelRef,
  type HubRef,
  MODEL_CATALOG,
  type ModelSpec,
  modelSpecFromHfConfig,
  parseHubModelRef,
  printable,
  RigfitError,
} from '@rigfit/core'
import { readModelFolder, resolveModel } from '@rigfit/core/node'
import { cachedRepos, findSnapshot, saveSnapshot } from './hub-cache.js'
import { type HubEnv, readHubEnv } from './hub-env.js'
import { errorOfRequest } from './hub-errors.js'
import { fetchHubFile, HubRequestError } from './hub-http.js'

/** How `--model` reaches the Hub: rigfit's cache folder (oclif's cacheDir), the time allowed, the environment. */
export interface HubOptions {
  cacheDir: string
  timeoutMs: number
  env?: NodeJS.ProcessEnv
}

export interface ResolvedModel {
  spec: ModelSpec
  /** The folder the config was read from (a local model folder or a cached snapshot), for its tokenizer.json. */
  folder: string | null
}

export const DEFAULT_HUB_TIMEOUT_MS = 10_000
/** A config.json is a few kilobytes. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024
/** The largest tokenizer.json files (Gemma's) are about 35 MB. */
const MAX_TOKENIZER_BYTES = 64 * 1024 * 1024

function statKind(path: string): 'file' | 'dir' | null {
  try {
    const stats = statSync(path)
    return stats.isDirectory() ? 'dir' : stats.isFile() ? 'file' : null
  } catch {
    return null
  }
}

function rigfitHubCache(options: HubOptions): string {
  return join(options.cacheDir, 'hub')
}

/**
 * `--model` in any of its forms: a catalog id (a bare name, as before), a path to a config.json or a model folder
 * (which wins over a Hub id of the same spelling), the Hub id of a catalog model without `@revision` (the catalog's
 * numbers, no network), or any other `org/name[@revision]`, read from the Hugging Face cache, rigfit's cache, or
 * the Hub. A model whose weights disagree with its config is priced by its config, with a warning on stderr.
 */
export async function resolveModelArg(arg: string, options: HubOptions): Promise<ResolvedModel> {
  const resolved = await resolveAnyForm(arg.trim(), options)
  const weights = resolved.spec.weights
  if (weights && !weights.agrees) {
    process.stderr.write(
      printable(
        `Warning: the safetensors weights of ${resolved.spec.name} hold ${weights.params} parameters, the config implies ${weights.configParams}; rigfit prices the config's architecture.\n`,
      ),
    )
  }
  return resolved
}

async function resolveAnyForm(text: string, options: HubOptions): Promise<ResolvedModel> {
  const kind = text === '' ? null : statKind(text)
  // A bare name is a catalog id first, as it always was; a path that exists wins over a Hub id of the same
  // spelling, as transformers' from_pretrained prefers a local folder.
  if (kind === 'dir' && /[/\\]/.test(text)) return { spec: readModelFolder(text), folder: text }
  if (kind !== null) return { spec: await resolveModel(text), folder: kind === 'dir' ? text : null }
  const ref = parseHubModelRef(text)
  const catalog =
    ref && !ref.pinned
      ? MODEL_CATALOG.find((m) => m.name.toLowerCase() === ref.repo.toLowerCase())
      : undefined
  if (ref === null || catalog) return { spec: await resolveModel(text), folder: null }
  return resolveHubModel(ref, options)
}

function withHub(spec: ModelSpec, ref: HubModelRef, commit: string | null, from: HubRef['from']): ModelSpec {
  return {
    ...spec,
    id: ref.pinned ? `${ref.repo}@${ref.revision}` : ref.repo,
    name: ref.repo,
    hub: { repo: ref.repo, revision: ref.revision, commit, from },
  }
}

async function resolveHubModel(ref: HubModelRef, options: HubOptions): Promise<ResolvedModel> {
  const env = readHubEnv(options.env)
  const caches = [
    [env.hubCache, 'hf-cache'],
    [rigfitHubCache(options), 'rigfit-cache'],
  ] as const
  for (const [root, from] of caches) {
    const snapshot = findSnapshot(root, ref.repo, ref.revision)
    if (snapshot) {
      return {
        spec: withHub(readModelFolder(snapshot.dir), ref, snapshot.commit, from),
        folder: snapshot.dir,
      }
    }
  }
  if (env.offline) throw offlineError(env, ref, options)
  const file = await fetchHubFile(env, {
    repo: ref.repo,
    revision: ref.revision,
    file: 'config.json',
    timeoutMs: options.timeoutMs,
    maxBytes: MAX_CONFIG_BYTES,
  }).catch((error: unknown) => {
    throw error instanceof HubRequestError ? errorOfRequest(env, error, near(env, ref, options)) : error
  })
  const source = `${ref.repo}@${ref.revision}/config.json`
  let json: unknown
  try {
    json = JSON.parse(file.text)
  } catch {
    throw new RigfitError(
      'input',
      'E_HUB_MALFORMED',
      `${source}: ${env.endpoint} sent something that is not JSON`,
      {
        suggestion: 'Check HF_ENDPOINT: a proxy or mirror may answer with an HTML page instead of the file.',
        details: { repo: ref.repo, revision: ref.revision, file: 'config.json' },
      },
    )
  }
  const spec = modelSpecFromHfConfig(json, source)
  // A fetched config is kept only when the endpoint named its commit: a branch name alone could move.
  const folder =
    file.commit === null
      ? null
      : await saveSnapshot(rigfitHubCache(options), ref.repo, ref.revision, file.commit, {
          'config.json': file.text,
        }).catch(() => null)
  return { spec: withHub(spec, ref, file.commit, 'hub'), folder }
}

/** Repository ids near `ref`: the catalog's and the caches', for a 404's "did you mean". */
function near(env: HubEnv, ref: HubModelRef, options: HubOptions): () => string[] {
  return () => {
    const candidates = new Set([
      ...MODEL_CATALOG.map((m) => m.name),
      ...cachedRepos(env.hubCache),
      ...cachedRepos(rigfitHubCache(options)),
    ])
    return closeMatches(ref.repo, [...candidates])
  }
}

function offlineError(env: HubEnv, ref: HubModelRef, options: HubOptions): RigfitError {
  return new RigfitError(
    'io',
    'E_HUB_OFFLINE',
    `HF_HUB_OFFLINE is set and ${ref.repo}@${ref.revision} is cached neither in ${env.hubCache} nor in ${rigfitHubCache(options)}`,
    {
      suggestion: `Once online, run the command again (rigfit keeps the config) or \`huggingface-cli download ${ref.repo} config.json\`; or unset HF_HUB_OFFLINE; or pass a local model folder: --model ./folder.`,
      details: { repo: ref.repo, revision: ref.revision, closeMatches: near(env, ref, options)() },
    },
  )
}

/**
 * The tokenizer.json of a resolved model, to count `--dataset` exactly: the one in its folder, else (for a Hub
 * model read at a known commit) fetched from the Hub and kept beside the config. Null when there is none, so the
 * count falls back to the bytes-per-token ratio and says so.
 */
export async function modelTokenizer(model: ResolvedModel, options: HubOptions): Promise<string | null> {
  if (model.folder !== null && statKind(join(model.folder, 'tokenizer.json')) === 'file')
    return join(model.folder, 'tokenizer.json')
  const hub = model.spec.hub
  if (hub === undefined || hub.commit === null) return null
  const env = readHubEnv(options.env)
  if (env.offline) return null
  try {
    const file = await fetchHubFile(env, {
      repo: hub.repo,
      revision: hub.commit,
      file: 'tokenizer.json',
      timeoutMs: options.timeoutMs,
      maxBytes: MAX_TOKENIZER_BYTES,
    })
    const dir = await saveSnapshot(rigfitHubCache(options), hub.repo, hub.revision, hub.commit, {
      'tokenizer.json': file.text,
    })
    return join(dir, 'tokenizer.json')
  } catch (error) {
    if (error instanceof HubRequestError && error.failure.kind === 'status' && error.failure.status === 404)
      return null
    if (error instanceof HubRequestError) throw errorOfRequest(env, error, () => [])
    throw error
  }
}
