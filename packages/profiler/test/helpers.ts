import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { GpuCatalogEntry } from '@rigfit/core'
import { loadBundledPlugins } from '@rigfit/core/node'

const here = dirname(fileURLToPath(import.meta.url))

/** A recorded tool output or file: fixtures/<tool>/<machine>.<ext>. */
export function fixture(path: string): string {
  return readFileSync(join(here, 'fixtures', path), 'utf8')
}

export function fixturePath(path: string): string {
  return join(here, 'fixtures', path)
}

/** Every bundled plugin's GPU catalog, loaded by core's loader as the CLI loads it. */
export function bundledCatalog(): GpuCatalogEntry[] {
  return loadBundledPlugins(createRequire(import.meta.url).resolve).catalog
}
