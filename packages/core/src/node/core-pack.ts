import { createRequire } from 'node:module'
import { dirname, join, sep } from 'node:path'
import { RigfitError } from '../errors.js'
import type { LoadedPack } from '../packs/loaded-pack.js'
import { loadPackPrechecked, type PrecheckedBundle } from './prechecked-packs.js'

/** The core defaults pack ships inside @rigfit/core: rules/pack.json, rules/rules/<id>.json, rules/docs/<id>.md. */
// Found through the package, not this file's place: a bundled CLI holds this code in a file of its own.
export const CORE_PACK_ROOT = join(
  dirname(createRequire(import.meta.url).resolve('@rigfit/core/package.json')),
  'rules',
  sep,
)

let corePack: LoadedPack | null = null

/**
 * The core defaults: what no vendor or user pack decides. Loaded once per process; from `prechecked` when its
 * files are the ones validated at build time.
 */
export function loadCorePack(prechecked: PrecheckedBundle | null = null): LoadedPack {
  if (corePack) return corePack
  const result = loadPackPrechecked(CORE_PACK_ROOT, { layer: 'core', kind: 'core' }, prechecked)
  if (!result.pack) {
    const first = result.problems[0]
    throw new RigfitError(
      'rules',
      'E_CORE_PACK',
      `the core defaults pack is broken: ${first ? `${first.file} ${first.path}: ${first.message}` : 'unknown problem'}`,
      {
        suggestion: 'Reinstall rigfit; the core pack ships with @rigfit/core.',
        details: result.problems,
      },
    )
  }
  corePack = result.pack
  return corePack
}
