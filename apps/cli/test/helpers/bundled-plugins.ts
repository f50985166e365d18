import { createRequire } from 'node:module'
import type { GpuCatalogEntry, LoadedPack } from '@rigfit/core'
import { type BundledPlugins, loadBundledPlugins } from '@rigfit/core/node'

let loaded: BundledPlugins | undefined

/** The bundled plugins, loaded once by core's loader as the CLI loads them; throws when one does not load cleanly. */
function bundled(): BundledPlugins {
  loaded ??= loadBundledPlugins(createRequire(import.meta.url).resolve)
  return loaded
}

/** Every entry of the bundled plugins' catalog.json files, in the CLI's plugin order. */
export function bundledCatalogEntries(): GpuCatalogEntry[] {
  return [...bundled().catalog]
}

/** The core pack and every bundled plugin's pack, as the CLI loads them. */
export function bundledPacks(): LoadedPack[] {
  return [...bundled().packs]
}
