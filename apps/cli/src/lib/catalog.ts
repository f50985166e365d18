import { join } from 'node:path'
import type { Command } from '@oclif/core'
import type { GpuCatalogEntry, PackProblem } from '@rigfit/core'
import { loadCatalogFile, type PrecheckedCatalogs, readPrecheckedCatalogs } from '@rigfit/core/node'
import { formatProblem, pluginPackRoots } from './packs.js'

/** Where the build writes the bundled plugins' GPU catalogs, validated once (`scripts/prechecked-packs.mjs`). */
export const PRECHECKED_CATALOGS_FILE = join('dist', 'prechecked-catalogs.json')

/** The catalogs validated when rigfit was built; null when the file is missing or fails its hash. */
function precheckedCatalogs(command: Command): PrecheckedCatalogs | null {
  return readPrecheckedCatalogs(join(command.config.root, PRECHECKED_CATALOGS_FILE))
}

export interface CatalogsLoad {
  entries: GpuCatalogEntry[]
  problems: PackProblem[]
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
  const entries: GpuCatalogEntry[] = []
  const problems: PackProblem[] = []
  const seen = new Map<string, string>()
  for (const root of roots) {
    const catalog = loadCatalogFile(join(root.root, 'catalog.json'), prechecked)
    problems.push(...catalog.problems.map((problem) => ({ ...problem, pack: root.name })))
    for (const entry of catalog.entries) {
      const owner = seen.get(entry.id)
      if (owner) {
        problems.push({
          code: 'E_PACK_CATALOG',
          pack: root.name,
          file: join(root.root, 'catalog.json'),
          ruleId: null,
          path: '$.entries',
          message: `GPU id "${entry.id}" is already defined by ${owner}; this one is ignored`,
        })
        continue
      }
      seen.set(entry.id, root.name)
      entries.push(entry)
    }
  }
  return { entries, problems }
}

/** Every catalog entry of the installed plugins; problems with a catalog are printed as warnings on stderr. */
export async function loadAllCatalogEntries(command: Command): Promise<GpuCatalogEntry[]> {
  const first = !catalogsByCommand.has(command.config)
  const { entries, problems } = await loadAllCatalogs(command)
  if (first) for (const problem of problems) command.warn(`GPU catalog skipped: ${formatProblem(problem)}`)
  return entries
}
