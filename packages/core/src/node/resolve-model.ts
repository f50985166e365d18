import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { RigfitError } from '../errors.js'
import { findCatalogModel, MODEL_CATALOG } from '../model/catalog.js'
import { closeMatches } from '../model/close-matches.js'
import { modelSpecFromHfConfig } from '../model/hf-config.js'
import { describeJsonError } from '../packs/safe-json.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import { readTextFile } from './files.js'
import { readFolderWeights } from './model-weights.js'

/** A Hugging Face config.json is a few kilobytes; anything near this is not one. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024

async function isDirectory(path: string): Promise<boolean | undefined> {
  try {
    return (await stat(path)).isDirectory()
  } catch {
    return undefined
  }
}

/** Reads and parses a config.json file: the spec, and the JSON for the fields the spec does not keep. */
function readConfigJson(
  file: string,
  isDirFile: boolean,
): { spec: ModelSpec; json: Record<string, unknown> } {
  const read = readTextFile(file, MAX_CONFIG_BYTES)
  if (!read.ok) {
    throw new RigfitError('input', 'E_MODEL_CONFIG', `${file}: cannot be read (${read.message})`, {
      suggestion: isDirFile
        ? 'A model directory must contain the config.json of the model.'
        : 'Check the path and its permissions.',
    })
  }
  let json: unknown
  try {
    json = JSON.parse(read.text)
  } catch (error) {
    throw new RigfitError(
      'input',
      'E_MODEL_CONFIG',
      `${file}: is not valid JSON (${describeJsonError(error)})`,
      {
        suggestion: 'Pass the config.json of a Hugging Face model, unchanged.',
        cause: error,
      },
    )
  }
  return { spec: modelSpecFromHfConfig(json, file), json: json as Record<string, unknown> }
}

/**
 * A model folder (a download, or a snapshot of the Hugging Face cache): its config.json, and what its safetensors
 * headers say about the weights (exact parameter count and stored dtype) when it holds any.
 */
export function readModelFolder(dir: string): ModelSpec {
  const { spec, json } = readConfigJson(join(dir, 'config.json'), true)
  const weights = readFolderWeights(dir, spec, json)
  return weights ? { ...spec, weights } : spec
}

async function readConfigFile(path: string, isDir: boolean): Promise<ModelSpec> {
  return isDir ? readModelFolder(path) : readConfigJson(path, false).spec
}

/**
 * A model by catalog id (`llama-3.1-8b`), Hugging Face repository id of a catalog model
 * (`meta-llama/Llama-3.1-8B`), or path to a config.json or a directory holding one.
 * An unknown id is a RigfitError listing the closest catalog ids.
 */
export async function resolveModel(idOrPath: string): Promise<ModelSpec> {
  const query = idOrPath.trim()
  if (query === '') {
    throw new RigfitError('usage', 'E_MODEL_UNKNOWN', 'no model given', {
      suggestion: `Pass a catalog id such as ${MODEL_CATALOG.slice(0, 3)
        .map((m) => m.id)
        .join(', ')}, or a path to a config.json.`,
    })
  }
  const fromCatalog = findCatalogModel(query)
  if (fromCatalog) return fromCatalog
  const isDir = await isDirectory(query)
  if (isDir !== undefined) return readConfigFile(query, isDir)
  if (/\.json$/i.test(query) || query.startsWith('.') || query.startsWith('/') || query.includes('\\')) {
    throw new RigfitError('input', 'E_MODEL_CONFIG', `${query}: no such file`, {
      suggestion: 'Check the path to the config.json, or pass a catalog model id.',
    })
  }
  const ids = MODEL_CATALOG.map((m) => m.id)
  const bare = query.includes('/') ? query.slice(query.lastIndexOf('/') + 1) : query
  const near = closeMatches(bare, ids)
  throw new RigfitError(
    'input',
    'E_MODEL_UNKNOWN',
    `unknown model "${query}": not a catalog id and not a file`,
    {
      suggestion:
        (near.length > 0 ? `Did you mean ${near.join(', ')}? ` : '') +
        "Pass the path to the model's config.json for models outside the catalog; `rigfit estimate --list-models` lists the catalog.",
      details: { closeMatches: near },
    },
  )
}
