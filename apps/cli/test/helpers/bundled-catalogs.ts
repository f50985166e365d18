import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { GpuCatalogEntry } from '@rigfit/core'
import { loadCatalogFile } from '@rigfit/core/node'

const require = createRequire(import.meta.url)

/** The bundled plugins that carry a GPU catalog (cpu has none), in the CLI's plugin order. */
export const CATALOG_FAMILIES = [
  'rtx50',
  'rtx40',
  'rtx30',
  'rtx20',
  'datacenter',
  'rdna',
  'apple',
  'intel',
] as const

/** Every entry of the bundled plugins' catalog.json files; throws when one does not load cleanly. */
export function bundledCatalogEntries(): GpuCatalogEntry[] {
  return CATALOG_FAMILIES.flatMap((family) => {
    const root = dirname(require.resolve(`@rigfit/plugin-${family}/package.json`))
    const { entries, problems } = loadCatalogFile(join(root, 'catalog.json'))
    if (problems.length > 0) throw new Error(`plugin ${family}: ${JSON.stringify(problems)}`)
    return entries
  })
}
