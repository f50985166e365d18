import { readdirSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { PACK_LIMITS } from '../packs/limits.js'
import type { LoadedPack } from '../packs/loaded-pack.js'
import {
  type PackFile,
  type PackParseResult,
  parsePackDirectory,
  parseRuleFile,
  parseSingleFilePack,
  problem,
} from '../packs/parse-pack.js'
import type { PackLayer, PackOrigin, PackProblem } from '../schemas/rule-pack.js'
import { MAX_RULES_PER_PACK, type Rule } from '../schemas/rule-pack.js'
import { displayPath, listJsonFiles, readLimited, statOrNull, staysInside } from './files.js'

export interface PackLocation {
  layer: PackLayer
  kind: PackOrigin['kind']
  /** The oclif plugin that contributed the pack, if any. */
  plugin?: string | null
}

export interface PacksResult {
  packs: LoadedPack[]
  problems: PackProblem[]
}

/**
 * Loads one pack: a directory (pack.json + rules/<id>.json), a single-file pack, or the pack.json of a directory.
 */
export function loadPackPath(path: string, location: PackLocation): PackParseResult {
  const absolute = resolve(path)
  const stats = statOrNull(absolute)
  if (!stats) {
    return {
      pack: null,
      problems: [problem('E_PACK_IO', null, displayPath(absolute), null, '$', 'no such file or directory')],
    }
  }
  if (stats.isFile() && basename(absolute) === 'pack.json')
    return loadPackPath(join(absolute, '..'), location)
  const origin: PackOrigin = { kind: location.kind, path: absolute, plugin: location.plugin ?? null }
  const source = { layer: location.layer, origin }
  if (stats.isDirectory()) return loadPackDirectory(absolute, source)
  const file = readLimited(absolute, PACK_LIMITS.singleFileBytes)
  if ('problem' in file) return { pack: null, problems: [file.problem] }
  return parseSingleFilePack(file, source)
}

function loadPackDirectory(dir: string, source: { layer: PackLayer; origin: PackOrigin }): PackParseResult {
  const manifest = readLimited(join(dir, 'pack.json'), PACK_LIMITS.manifestBytes, { within: dir })
  if ('problem' in manifest) return { pack: null, problems: [manifest.problem] }
  const rulesDir = join(dir, 'rules')
  const rulesProblem = checkRulesFolder(rulesDir, dir)
  if (rulesProblem) return { pack: null, problems: [rulesProblem] }
  const problems: PackProblem[] = []
  const ruleFiles: PackFile[] = []
  const names = listJsonFiles(rulesDir)
  if (names.length === 0) {
    const message = 'holds no rule files; a pack keeps one rule per rules/<id>.json'
    return { pack: null, problems: [problem('E_PACK_IO', null, displayPath(rulesDir), null, '$', message)] }
  }
  if (names.length > MAX_RULES_PER_PACK) {
    const message = `${names.length} rule files, over the limit of ${MAX_RULES_PER_PACK}`
    return {
      pack: null,
      problems: [problem('E_PACK_TOO_LARGE', null, displayPath(rulesDir), null, '$', message)],
    }
  }
  for (const name of names) {
    const file = readLimited(join(rulesDir, name), PACK_LIMITS.ruleFileBytes, { within: dir })
    if ('problem' in file) problems.push(file.problem)
    else ruleFiles.push(file)
  }
  const parsed = parsePackDirectory(manifest, ruleFiles, source)
  if (problems.length === 0) return parsed
  const packName = parsed.pack?.meta.name ?? null
  return {
    pack: null,
    problems: [...problems.map((p) => ({ ...p, pack: p.pack ?? packName })), ...parsed.problems],
  }
}

/**
 * A pack folder's rules/ must be a folder of its own: a regular file, or a link out of the pack (to /etc, say),
 * would otherwise load as a pack of no rules and pass as valid.
 */
function checkRulesFolder(rulesDir: string, dir: string): PackProblem | null {
  const stats = statOrNull(rulesDir)
  const fail = (message: string) => problem('E_PACK_IO', null, displayPath(rulesDir), null, '$', message)
  if (!stats) return fail('no rules/ folder; a pack keeps one rule per rules/<id>.json')
  if (!stats.isDirectory()) return fail('not a folder; a pack keeps one rule per rules/<id>.json')
  if (!staysInside(rulesDir, dir))
    return fail('is a link to a folder outside the pack; a pack reads its own files only')
  return null
}

/**
 * Every pack in a folder of packs (the user's config rules folder, `--rules DIR`): each sub-folder with a
 * pack.json and each *.json file is one pack; a folder that is itself a pack is loaded as one. A missing
 * folder holds no packs. Bad packs are reported and skipped; the others load.
 */
export function loadPacksIn(dir: string, location: PackLocation): PacksResult {
  const absolute = resolve(dir)
  const stats = statOrNull(absolute)
  if (!stats) return { packs: [], problems: [] }
  if (stats.isFile() || statOrNull(join(absolute, 'pack.json'))?.isFile())
    return collect([loadPackPath(absolute, location)])
  if (!stats.isDirectory()) {
    // /dev/null, a FIFO, a socket: neither a pack file nor a folder of packs; never opened.
    const file = displayPath(absolute)
    return {
      packs: [],
      problems: [problem('E_PACK_IO', null, file, null, '$', 'not a regular file or a folder')],
    }
  }
  const results: PackParseResult[] = []
  for (const entry of readdirSync(absolute, { withFileTypes: true }).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  )) {
    if (entry.name.startsWith('.')) continue
    const child = join(absolute, entry.name)
    if (entry.isDirectory() || (entry.isSymbolicLink() && statOrNull(child)?.isDirectory())) {
      if (statOrNull(join(child, 'pack.json'))?.isFile()) results.push(loadPackPath(child, location))
    } else if (entry.name.endsWith('.json')) {
      results.push(loadPackPath(child, location))
    }
  }
  return collect(results)
}

function collect(results: PackParseResult[]): PacksResult {
  const packs: LoadedPack[] = []
  const problems: PackProblem[] = []
  for (const result of results) {
    if (result.pack) packs.push(result.pack)
    problems.push(...result.problems)
  }
  return { packs, problems }
}

export interface ValidationTarget extends PacksResult {
  /** Single rule files checked on their own. */
  rules: Rule[]
}

/**
 * What `rigfit rules validate` checks: a pack folder, its pack.json, a single-file pack, one rule file
 * (an object with `event` and no `rules`), or a folder of packs.
 */
export function loadValidationTarget(path: string, location: PackLocation): ValidationTarget {
  const absolute = resolve(path)
  const stats = statOrNull(absolute)
  if (stats?.isFile() && basename(absolute) !== 'pack.json') {
    const file = readLimited(absolute, PACK_LIMITS.singleFileBytes)
    if ('problem' in file) return { packs: [], rules: [], problems: [file.problem] }
    if (looksLikeRule(file.text)) {
      const parsed = parseRuleFile(file)
      return { packs: [], rules: parsed.rule ? [parsed.rule] : [], problems: parsed.problems }
    }
  }
  const isPack = !stats || stats.isFile() || statOrNull(join(absolute, 'pack.json'))?.isFile()
  const result = isPack ? collect([loadPackPath(absolute, location)]) : loadPacksIn(absolute, location)
  return { ...result, rules: [] }
}

function looksLikeRule(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text)
    return (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      'event' in value &&
      !('rules' in value)
    )
  } catch {
    return false
  }
}
