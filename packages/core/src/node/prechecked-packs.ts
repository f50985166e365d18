import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { deepFreeze } from '../deep-freeze.js'
import { PACK_LIMITS } from '../packs/limits.js'
import type { LoadedPack } from '../packs/loaded-pack.js'
import type { PackParseResult } from '../packs/parse-pack.js'
import { listJsonFiles, statOrNull } from './files.js'
import { hashedFileText, readHashedFile } from './hashed-file.js'
import { loadPackPath, type PackLocation } from './load-pack.js'

/**
 * Packs validated once, when rigfit is built, so that a start-up does not validate the bundled packs again.
 * Each pack is stored under the digest of its source files (pack.json and rules/*.json, names and bytes): a pack
 * folder whose files still have that digest is the very text that passed validation, so it loads from the bundle;
 * any other pack (edited, a user's, a community one) goes through full validation. The bundle carries a hash of
 * its own body: a bundle that does not match it is ignored whole.
 */
export const PRECHECKED_FORMAT = 'rigfit-prechecked-packs/1'

/** A pack as validation returned it, without where it was loaded from (that is decided at load time). */
type PrecheckedPackBody = Omit<LoadedPack, 'layer' | 'origin'>

interface PrecheckedEntry {
  digest: string
  pack: PrecheckedPackBody
}

export type PrecheckedBundle = ReadonlyMap<string, PrecheckedPackBody>

export type PrecheckedRead =
  | { ok: true; bundle: PrecheckedBundle }
  | { ok: false; reason: 'missing' | 'unreadable' | 'format' | 'hash' }

/**
 * The digest of a pack folder's source files, or null when the folder is not a readable pack folder (a
 * single-file pack, a missing file, a file over the limits): such a pack is validated in full.
 */
export function packDigest(root: string): string | null {
  const dir = resolve(root)
  if (!statOrNull(dir)?.isDirectory()) return null
  const hash = createHash('sha256')
  // Plain reads: the digest stands for the bytes, wherever they are read from, so a file that is not the text
  // validated at build time (a link elsewhere included) differs and is validated in full.
  const manifest = readBounded(join(dir, 'pack.json'), PACK_LIMITS.manifestBytes)
  if (manifest === null) return null
  hash.update('pack.json\0').update(manifest).update('\0')
  const rulesDir = join(dir, 'rules')
  for (const name of listJsonFiles(rulesDir)) {
    const file = readBounded(join(rulesDir, name), PACK_LIMITS.ruleFileBytes)
    if (file === null) return null
    hash.update(`rules/${name}\0`).update(file).update('\0')
  }
  return hash.digest('hex')
}

/** A regular file's bytes, or null when it is missing, not a regular file (a FIFO would block), or over `maxBytes`. */
function readBounded(path: string, maxBytes: number): Buffer | null {
  const stats = statOrNull(path)
  if (!stats?.isFile() || stats.size > maxBytes) return null
  try {
    const bytes = readFileSync(path)
    return bytes.length <= maxBytes ? bytes : null
  } catch {
    return null
  }
}

/**
 * Validates each pack folder in full and returns the bundle file's text. Throws, naming every problem, when a
 * pack does not validate: a build must not ship a pack that would be refused at run time.
 */
export function buildPrecheckedBundle(roots: readonly string[]): string {
  const entries: PrecheckedEntry[] = []
  for (const root of roots) {
    const result = loadPackPath(root, { layer: 'vendor', kind: 'plugin' })
    const digest = packDigest(root)
    if (!result.pack || digest === null) {
      const problems = result.problems.map((p) => `${p.file} ${p.path}: ${p.message}`).join('; ')
      throw new Error(`pack ${root} does not validate: ${problems || 'not a pack folder'}`)
    }
    const { layer: _layer, origin: _origin, ...pack } = result.pack
    entries.push({ digest, pack })
  }
  return hashedFileText(PRECHECKED_FORMAT, entries)
}

/** Reads a bundle file, checking its format and hash; a bundle that fails either is not used. */
export function readPrecheckedBundle(path: string): PrecheckedRead {
  const read = readHashedFile(path, PRECHECKED_FORMAT)
  if (!read.ok) return read
  const entries = read.body as PrecheckedEntry[]
  return { ok: true, bundle: new Map(entries.map((entry) => [entry.digest, entry.pack])) }
}

/**
 * Loads a pack folder from the bundle when its source files are the ones validated at build time, and through
 * full validation (loadPackPath) otherwise.
 */
export function loadPackPrechecked(
  path: string,
  location: PackLocation,
  bundle: PrecheckedBundle | null,
): PackParseResult & { prechecked: boolean } {
  const absolute = resolve(path)
  const body = bundle && bundle.size > 0 ? bundle.get(packDigest(absolute) ?? '') : undefined
  if (!body) return { ...loadPackPath(absolute, location), prechecked: false }
  const origin = { kind: location.kind, path: absolute, plugin: location.plugin ?? null }
  // A fresh copy per load: the bundle's objects are never handed out, so freezing one load leaves the next alone.
  const pack = deepFreeze({ ...structuredClone(body), layer: location.layer, origin }) as LoadedPack
  return { pack, problems: [], prechecked: true }
}
