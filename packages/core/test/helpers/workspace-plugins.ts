import { fileURLToPath } from 'node:url'
import { type BundledPlugins, loadBundledPlugins } from '../../src/node/plugin-bundle.js'

// The plugins depend on core, so core cannot depend on them: its tests find the bundled plugins in the workspace.
const pluginsDir = new URL('../../../../plugins/', import.meta.url)

let loaded: BundledPlugins | undefined

/** The bundled plugins' catalogs and packs, loaded by the loader the CLI and every test helper use. */
export function workspacePlugins(): BundledPlugins {
  loaded ??= loadBundledPlugins((specifier) =>
    fileURLToPath(new URL(specifier.replace('@rigfit/plugin-', ''), pluginsDir)),
  )
  return loaded
}
