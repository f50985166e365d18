import { join } from 'node:path'
import type { Command } from '@oclif/core'
import type { GpuCatalogEntry } from '@rigfit/core'
import {
  type CatalogsLoad,
  loadPluginCatalogs,
  type PrecheckedCatalogs,
  readPrecheckedCatalogs,
} from '@rigfit/core/node'
import { formatProblem, pluginPackRoots } from './packs.js'

export type { CatalogsLoad }

/** Where the build writes the bundled plugins' GPU catalogs, validated once (`scripts/prechecked-packs.mjs`). */
export const PRECHECKED_CATALOGS_FILE = join('dist', 'prechecked-catalogs.json')

/** The catalogs validated when rigfit was built; null when the file is missing or fails its hash. */
function precheckedCatalogs(command: Command): PrecheckedCatalogs | null {
  return readPrecheckedCatalogs(join(command.config.root, PRECHECKED_CATALOGS_FILE))
}

const catalogsByCommand = new WeakMap<object, Promise<CatalogsLoad>>()

/**
 * The GPU catalogs of every installed plugin (catalog.json beside its pack.json), in plugin order. A broken
 * catalog is reported and skipped; an id two plugins both define keeps the first.
 */
export function loadAllCatalogs(command: Command): Promise<CatalogsLoad> {
  let pending = catalogsByCommand.get(command.config)
  if (!pending) {
    pending = collectCatalogs(command)
    catalogsByCommand.set(command.config, pending)
  }
  return pending
}

async function collectCatalogs(command: Command): Promise<CatalogsLoad> {
  const { roots } = await pluginPackRoots(command)
  const prechecked = roots.length > 0 ? precheckedCatalogs(command) : null
  return loadPluginCatalogs(roots, prechecked)
}

/** Every catalog entry of the installed plugins; problems with a catalog are printed as warnings on stderr. */
export async function loadAllCatalogEntries(command: Command): Promise<GpuCatalogEntry[]> {
  const first = !catalogsByCommand.has(command.config)
  const { entries, problems } = await loadAllCatalogs(command)
  if (first) for (const problem of problems) command.warn(`GPU catalog skipped: ${formatProblem(problem)}`)
  return entries
}
