import { readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, isAbsolute, join, relative, resolve } from 'node:path'
import type { PackLayer, PackOrigin, PackProblem } from '../schemas/rule-pack.js'
import { MAX_RULES_PER_PACK, type Rule } from '../schemas/rule-pack.js'
import { PACK_LIMITS } from './limits.js'
import type { LoadedPack } from './loaded-pack.js'
import {
  type PackFile,
  type PackParseResult,
  parsePackDirectory,
  parseRuleFile,
  parseSingleFilePack,
  problem,
} from './parse-pack.js'

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

/** A path as messages show it: relative to the working directory when inside it. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path)
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path
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
  const manifest = readLimited(join(dir, 'pack.json'), PACK_LIMITS.manifestBytes)
  if ('problem' in manifest) return { pack: null, problems: [manifest.problem] }
  const rulesDir = join(dir, 'rules')
  const problems: PackProblem[] = []
  const ruleFiles: PackFile[] = []
  const names = listJsonFiles(rulesDir)
  if (names.length > MAX_RULES_PER_PACK) {
    const message = `${names.length} rule files, over the limit of ${MAX_RULES_PER_PACK}`
    return {
      pack: null,
      problems: [problem('E_PACK_TOO_LARGE', null, displayPath(rulesDir), null, '$', message)],
    }
  }
  for (const name of names) {
    const file = readLimited(join(rulesDir, name), PACK_LIMITS.ruleFileBytes)
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

/** *.json files of a folder, sorted; none when the folder is missing. */
export function listJsonFiles(dir: string): string[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names.filter((name) => name.endsWith('.json') && !name.startsWith('.')).sort()
}

/** Reads a file after checking its size, so an oversized file is refused without being read. */
export function readLimited(path: string, maxBytes: number): PackFile | { problem: PackProblem } {
  const file = displayPath(path)
  const stats = statOrNull(path)
  if (!stats?.isFile()) {
    return {
      problem: problem('E_PACK_IO', null, file, null, '$', stats ? 'not a regular file' : 'no such file'),
    }
  }
  if (stats.size > maxBytes) {
    return {
      problem: problem(
        'E_PACK_TOO_LARGE',
        null,
        file,
        null,
        '$',
        `${stats.size} bytes is over the limit of ${maxBytes} bytes`,
      ),
    }
  }
  try {
    return { file, text: readFileSync(path, 'utf8') }
  } catch (error) {
    return {
      problem: problem('E_PACK_IO', null, file, null, '$', `cannot read: ${(error as Error).message}`),
    }
  }
}

function statOrNull(path: string) {
  try {
    return statSync(path)
  } catch {
    return null
  }
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
