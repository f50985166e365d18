import { dirname } from 'node:path'
import { type CatalogResult, parseCatalog } from '../catalog/load-catalog.js'
import { PACK_LIMITS } from '../packs/limits.js'
import type { GpuCatalogEntry } from '../schemas/gpu-catalog.js'
import { readLimited } from './files.js'
import { hashedFileText, readHashedFile, sha256 } from './hashed-file.js'

/**
 * GPU catalogs validated once, when rigfit is built, so that a start-up does not parse the bundled plugins'
 * catalogs again. Each catalog's entries are stored under the sha256 of its catalog.json text: a file whose text
 * still has that hash is the very text that passed validation; any other (edited, a user's, a community plugin's)
 * is validated in full. The file carries a hash of its own body: one that does not match it is ignored whole.
 */
export const PRECHECKED_CATALOGS_FORMAT = 'rigfit-prechecked-catalogs/1'

export type PrecheckedCatalogs = ReadonlyMap<string, GpuCatalogEntry[]>

/** A plugin's catalog.json; a missing file is an empty catalog (the cpu plugin has none). */
export function loadCatalogFile(path: string, prechecked: PrecheckedCatalogs | null = null): CatalogResult {
  const read = readLimited(path, PACK_LIMITS.dataFileBytes, { within: dirname(path) })
  if ('problem' in read) {
    if (read.problem.code === 'E_PACK_IO' && read.problem.message === 'no such file')
      return { entries: [], problems: [] }
    return { entries: [], problems: [{ ...read.problem, code: 'E_PACK_CATALOG' }] }
  }
  const entries = prechecked && prechecked.size > 0 ? prechecked.get(sha256(read.text)) : undefined
  // A fresh copy per load: the stored entries are never handed out.
  if (entries) return { entries: structuredClone(entries), problems: [] }
  return parseCatalog(read.file, read.text)
}

/**
 * Validates each catalog.json in full and returns the file's text. Throws, naming every problem, when one does
 * not validate: a build must not ship a catalog that would be refused at run time. Missing files are skipped.
 */
export function buildPrecheckedCatalogs(paths: readonly string[]): string {
  const entries: { hash: string; entries: GpuCatalogEntry[] }[] = []
  for (const path of paths) {
    const read = readLimited(path, PACK_LIMITS.dataFileBytes, { within: dirname(path) })
    if ('problem' in read) {
      if (read.problem.message === 'no such file') continue
      throw new Error(`catalog ${path} does not validate: ${read.problem.message}`)
    }
    const result = parseCatalog(read.file, read.text)
    if (result.problems.length > 0) {
      const problems = result.problems.map((p) => `${p.file} ${p.path}: ${p.message}`).join('; ')
      throw new Error(`catalog ${path} does not validate: ${problems}`)
    }
    entries.push({ hash: sha256(read.text), entries: result.entries })
  }
  return hashedFileText(PRECHECKED_CATALOGS_FORMAT, entries)
}

/** The catalogs validated at build time; null when the file is missing or fails its format or hash. */
export function readPrecheckedCatalogs(path: string): PrecheckedCatalogs | null {
  const read = readHashedFile(path, PRECHECKED_CATALOGS_FORMAT)
  if (!read.ok) return null
  const stored = read.body as { hash: string; entries: GpuCatalogEntry[] }[]
  return new Map(stored.map((catalog) => [catalog.hash, catalog.entries]))
}
