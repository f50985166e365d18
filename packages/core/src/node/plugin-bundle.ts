import { dirname, join } from 'node:path'
import type { LoadedPack } from '../packs/loaded-pack.js'
import type { PackHookResult } from '../plugin.js'
import type { GpuCatalogEntry } from '../schemas/gpu-catalog.js'
import type { PackProblem } from '../schemas/pack-loading.js'
import { loadCorePack } from './core-pack.js'
import { loadCatalogFile, type PrecheckedCatalogs } from './prechecked-catalogs.js'
import { loadPackPrechecked, type PrecheckedBundle } from './prechecked-packs.js'

/** A plugin's pack folder, as its `rigfit:packs` hook names it, and the npm package that answered. */
export interface PluginRoot extends PackHookResult {
  plugin: string
}

export interface CatalogsLoad {
  /** Every plugin's entries in plugin order; an id two plugins both define keeps the first. */
  entries: GpuCatalogEntry[]
  /** The entries each plugin brought, by its pack name. */
  byPlugin: Record<string, GpuCatalogEntry[]>
  problems: PackProblem[]
}

/**
 * The plugins the rigfit CLI ships, sorted by package name: the order the CLI loads their packs and catalogs in.
 * apps/cli/package.json lists them for oclif; a CLI test holds the two lists equal.
 */
export const BUNDLED_PLUGINS = [
  '@rigfit/plugin-apple',
  '@rigfit/plugin-cpu',
  '@rigfit/plugin-datacenter',
  '@rigfit/plugin-intel',
  '@rigfit/plugin-rdna',
  '@rigfit/plugin-rtx20',
  '@rigfit/plugin-rtx30',
  '@rigfit/plugin-rtx40',
  '@rigfit/plugin-rtx50',
] as const

/** Plugins in the CLI's order: by package name, whatever order their hooks answered in. */
export function sortPluginRoots<T extends PluginRoot>(roots: readonly T[]): T[] {
  return [...roots].sort((a, b) => (a.plugin < b.plugin ? -1 : a.plugin > b.plugin ? 1 : 0))
}

/**
 * The GPU catalogs of these plugins (catalog.json beside each pack.json), in the order given. A broken catalog is
 * reported and skipped; an id two plugins both define keeps the first. `prechecked` (the catalogs the build
 * validated) spares validating a catalog whose text is the one validated.
 */
export function loadPluginCatalogs(
  roots: readonly PluginRoot[],
  prechecked: PrecheckedCatalogs | null = null,
): CatalogsLoad {
  const entries: GpuCatalogEntry[] = []
  const byPlugin: Record<string, GpuCatalogEntry[]> = {}
  const problems: PackProblem[] = []
  const seen = new Map<string, string>()
  for (const root of roots) {
    const catalog = loadCatalogFile(join(root.root, 'catalog.json'), prechecked)
    problems.push(...catalog.problems.map((problem) => ({ ...problem, pack: root.name })))
    byPlugin[root.name] = catalog.entries
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
  return { entries, byPlugin, problems }
}

/**
 * The core defaults and each plugin's pack, as vendor packs, in the order given; `prechecked` (the packs the
 * build validated) spares validating them again. A broken pack is reported and left out.
 */
export function loadPluginPacks(
  roots: readonly PluginRoot[],
  prechecked: PrecheckedBundle | null = null,
): { packs: LoadedPack[]; problems: PackProblem[] } {
  const packs: LoadedPack[] = [loadCorePack(prechecked)]
  const problems: PackProblem[] = []
  for (const root of roots) {
    const location = { layer: 'vendor', kind: 'plugin', plugin: root.plugin } as const
    const result = loadPackPrechecked(root.root, location, prechecked)
    if (result.pack) packs.push(result.pack)
    problems.push(...result.problems)
  }
  return { packs, problems }
}

/**
 * The bundled plugins' folders: `resolve` finds a file of an installed package, as `require.resolve` does from the
 * caller's package (core does not depend on its plugins; the CLI and the test packages do).
 */
export function bundledPluginRoots(resolve: (specifier: string) => string): PluginRoot[] {
  return BUNDLED_PLUGINS.map((plugin) => ({
    name: plugin.replace('@rigfit/plugin-', ''),
    root: dirname(resolve(`${plugin}/package.json`)),
    plugin,
  }))
}

export interface BundledPlugins {
  /** Every bundled catalog entry, the list `--gpu NAME` resolves against. */
  catalog: GpuCatalogEntry[]
  /** Each bundled plugin's catalog, by pack name (`rtx40`); the cpu plugin's is empty. */
  catalogs: Record<string, GpuCatalogEntry[]>
  /** The packs `rigfit plan` runs: core's defaults and every bundled plugin's pack. */
  packs: LoadedPack[]
}

/**
 * The catalogs and packs the CLI plans with when no other plugin is installed, loaded as the CLI loads them;
 * throws on any problem, since a bundled plugin must load cleanly. For tests, benches and tools.
 */
export function loadBundledPlugins(resolve: (specifier: string) => string): BundledPlugins {
  const roots = bundledPluginRoots(resolve)
  const catalogs = loadPluginCatalogs(roots)
  const packs = loadPluginPacks(roots)
  const problems = [...catalogs.problems, ...packs.problems]
  if (problems.length > 0) throw new Error(`bundled plugins do not load: ${JSON.stringify(problems)}`)
  return { catalog: catalogs.entries, catalogs: catalogs.byPlugin, packs: packs.packs }
}
