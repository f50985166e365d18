import type { LoadedPack } from '../../src/packs/loaded-pack.js'
import { parseSingleFilePack } from '../../src/packs/parse-pack.js'
import type { PackLayer } from '../../src/schemas/rule-pack.js'

/** A pack written as a user would write a single-file pack, parsed through the real loader; throws if refused. */
export function packOf(
  name: string,
  layer: PackLayer,
  rules: unknown[],
  appliesTo: unknown = null,
): LoadedPack {
  const text = JSON.stringify({
    schemaVersion: 1,
    meta: { name, version: '1.0.0', description: name },
    appliesTo,
    rules,
  })
  const result = parseSingleFilePack(
    { file: `${name}.json`, text },
    { layer, origin: { kind: 'user', path: name, plugin: null } },
  )
  if (!result.pack) throw new Error(JSON.stringify(result.problems))
  return result.pack
}
