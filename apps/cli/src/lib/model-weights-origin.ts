import { readdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import type { ResolvedModel } from './hub/resolve-model-arg.js'

/** Trained weights as transformers saves them: safetensors shards or their index, or PyTorch's .bin files. */
const WEIGHT_FILE = /(\.safetensors|\.safetensors\.index\.json|^pytorch_model.*\.bin)$/

/**
 * Whether a model was given only as its architecture, with no trained weights to start from: a config.json (or
 * a folder) with no weight files beside it. Catalog and Hub models have published weights. Such a model trains
 * from scratch unless --method names a fine-tune.
 */
export function isConfigOnly(model: ResolvedModel, arg: string): boolean {
  const spec = model.spec
  if (spec.source !== 'config' || spec.hub || spec.weights) return false
  const folder = model.folder ?? (isFile(arg) ? dirname(arg) : null)
  if (folder === null) return false
  try {
    return !readdirSync(folder).some((name) => WEIGHT_FILE.test(name))
  } catch {
    return true
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}
