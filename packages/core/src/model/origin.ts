import type { ModelSpec } from '../schemas/model-spec.js'

const FROM: Record<NonNullable<ModelSpec['hub']>['from'], string> = {
  'hf-cache': 'the Hugging Face cache',
  'rigfit-cache': "rigfit's cache",
  hub: 'the Hub',
}

/**
 * Where a model's numbers came from, for the lines and pages that show a model: the Hub repository, revision and
 * commit. Null for catalog, config-file and generated models without a Hub origin.
 */
export function describeHubOrigin(model: ModelSpec): string | null {
  const hub = model.hub
  if (!hub) return null
  const commit = hub.commit === null ? 'commit not stated' : `commit ${hub.commit.slice(0, 12)}`
  return `${hub.repo}@${hub.revision} (${commit}, read from ${FROM[hub.from]})`
}

/** What the safetensors weights hold next to the config's count, or null when no weights were read. */
export function describeWeights(model: ModelSpec): string | null {
  const w = model.weights
  if (!w) return null
  const count = (n: number) => n.toLocaleString('en-US')
  const how =
    w.from === 'headers'
      ? `${w.files} safetensors header${w.files === 1 ? '' : 's'}`
      : 'the safetensors index'
  const check = w.agrees
    ? 'matches the config'
    : `the config implies ${count(w.configParams)}; rigfit prices the config's architecture`
  return `${count(w.params)} parameters stored in ${w.dtype} (${how}); ${check}`
}

/** The rows a model's origin adds to a table: `Hub` and `Weights` where known. */
export function modelOriginRows(model: ModelSpec): [string, string][] {
  const rows: [string, string][] = []
  const hub = describeHubOrigin(model)
  if (hub !== null) rows.push(['Hub', hub])
  const weights = describeWeights(model)
  if (weights !== null) rows.push(['Weights', weights])
  return rows
}
