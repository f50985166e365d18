import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import type { LoadedPack } from '@rigfit/core'
import { loadCorePack, loadPackPath } from '@rigfit/core/node'
import { CATALOG_FAMILIES } from './bundled-catalogs.js'

const require = createRequire(import.meta.url)

/** The bundled vendor plugins with a rule pack: those with a catalog, and the CPU one. */
const PACK_FAMILIES = [...CATALOG_FAMILIES, 'cpu'] as const

/** The core pack and every bundled plugin's pack, as the CLI loads them; throws when one does not load cleanly. */
export function bundledPacks(): LoadedPack[] {
  const vendor = PACK_FAMILIES.map((family) => {
    const root = dirname(require.resolve(`@rigfit/plugin-${family}/package.json`))
    const result = loadPackPath(root, { layer: 'vendor', kind: 'plugin', plugin: `@rigfit/plugin-${family}` })
    if (!result.pack) throw new Error(`plugin ${family}: ${JSON.stringify(result.problems)}`)
    return result.pack
  })
  return [loadCorePack(), ...vendor]
}
