import type { z } from 'zod'
import { deepFreeze } from '../deep-freeze.js'
import {
  MAX_RULES_PER_PACK,
  type PackLayer,
  PackManifest,
  type PackOrigin,
  type PackProblem,
  Rule,
  RulePack,
} from '../schemas/rule-pack.js'
import { describeIssues } from './describe-issues.js'
import { PACK_LIMITS } from './limits.js'
import type { LoadedPack } from './loaded-pack.js'
import { jsonPath, parseJsonSafely } from './safe-json.js'

export interface PackSource {
  layer: PackLayer
  origin: PackOrigin
}

/** A file's text and the name to show for it in messages. */
export interface PackFile {
  file: string
  text: string
}

export type PackParseResult = { pack: LoadedPack; problems: [] } | { pack: null; problems: PackProblem[] }

/**
 * A pack directory's pack.json and rules/<id>.json files, validated. Pure: the caller reads the files. A pack
 * with any problem is refused whole (a half-loaded pack would decide differently from what its author tested).
 */
export function parsePackDirectory(
  manifestFile: PackFile,
  ruleFiles: PackFile[],
  source: PackSource,
): PackParseResult {
  const problems: PackProblem[] = []
  const manifest = parseDocument(manifestFile, PackManifest, PACK_LIMITS.manifestBytes, null, problems)
  const packName = manifest?.meta.name ?? null
  const rules: Rule[] = []
  let totalBytes = 0
  for (const ruleFile of ruleFiles) {
    totalBytes += Buffer.byteLength(ruleFile.text, 'utf8')
    const parsed = parseRuleFile(ruleFile, packName)
    problems.push(...parsed.problems)
    if (parsed.rule) rules.push(parsed.rule)
  }
  const tooLarge = (message: string) =>
    problems.push(problem('E_PACK_TOO_LARGE', packName, source.origin.path, null, '$', message))
  if (totalBytes > PACK_LIMITS.packBytes) {
    tooLarge(`rule files total ${totalBytes} bytes, over the limit of ${PACK_LIMITS.packBytes}`)
  }
  if (rules.length > MAX_RULES_PER_PACK)
    tooLarge(`${rules.length} rules, over the limit of ${MAX_RULES_PER_PACK}`)
  if (!manifest || problems.length > 0) return { pack: null, problems }
  // Each rule is validated on its own and file names make ids unique, so the assembled pack needs no second pass.
  rules.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return { pack: toLoadedPack({ ...manifest, rules }, source), problems: [] }
}

/** One rules/<id>.json file: a valid rule whose id matches the file name. */
export function parseRuleFile(
  ruleFile: PackFile,
  packName: string | null = null,
): { rule: Rule | null; problems: PackProblem[] } {
  const problems: PackProblem[] = []
  const rule = parseDocument(ruleFile, Rule, PACK_LIMITS.ruleFileBytes, packName, problems)
  if (!rule) return { rule: null, problems }
  const expected = `${rule.id}.json`
  if (baseName(ruleFile.file) !== expected) {
    problems.push(
      problem(
        'E_PACK_RULE_FILE',
        packName,
        ruleFile.file,
        rule.id,
        '$.id',
        `rule id "${rule.id}" must live in a file named ${expected}`,
      ),
    )
    return { rule: null, problems }
  }
  return { rule, problems }
}

/** A whole pack in one JSON file: the manifest fields plus `rules`. */
export function parseSingleFilePack(packFile: PackFile, source: PackSource): PackParseResult {
  const problems: PackProblem[] = []
  const pack = parseDocument(packFile, RulePack, PACK_LIMITS.singleFileBytes, null, problems)
  if (!pack) return { pack: null, problems }
  return { pack: toLoadedPack(pack, source), problems: [] }
}

function parseDocument<T extends z.ZodType>(
  { file, text }: PackFile,
  schema: T,
  maxBytes: number,
  packName: string | null,
  problems: PackProblem[],
): z.infer<T> | null {
  const json = parseJsonSafely(text, { maxBytes, maxDepth: PACK_LIMITS.depth })
  if (!json.ok) {
    problems.push(
      problem(
        json.code,
        packName ?? packNameOf(json.document),
        file,
        ruleIdAt(json.document, pathOf(json.path)),
        json.path,
        json.message,
      ),
    )
    return null
  }
  const parsed = schema.safeParse(json.value)
  if (parsed.success) return parsed.data
  const name = packName ?? packNameOf(json.value)
  for (const report of describeIssues(parsed.error, json.value)) {
    problems.push(
      problem(
        'E_PACK_SCHEMA',
        name,
        file,
        ruleIdAt(json.value, report.path),
        jsonPath(report.path),
        report.message,
      ),
    )
  }
  return null
}

/** The rule an issue is in: the document's own id for a rule file, rules[i].id inside a single-file pack. */
function ruleIdAt(document: unknown, path: PropertyKey[]): string | null {
  if (!isRecord(document)) return null
  if (path[0] === 'rules' && typeof path[1] === 'number' && Array.isArray(document.rules)) {
    const rule: unknown = document.rules[path[1]]
    return isRecord(rule) && typeof rule.id === 'string' ? rule.id : `rules[${path[1]}]`
  }
  if (!('meta' in document) && typeof document.id === 'string') return document.id.slice(0, 80)
  return null
}

/** `$.rules[2].event` -> ['rules', 2, 'event'], enough to find the rule a path is in. */
function pathOf(path: string): PropertyKey[] {
  return [...path.matchAll(/\.([A-Za-z_$][\w$]*)|\[(\d+)\]/g)].map((m) =>
    m[2] !== undefined ? Number(m[2]) : (m[1] as string),
  )
}

function packNameOf(document: unknown): string | null {
  if (!isRecord(document) || !isRecord(document.meta)) return null
  return typeof document.meta.name === 'string' ? document.meta.name : null
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function baseName(file: string): string {
  return file.split(/[\\/]/).pop() ?? file
}

export function problem(
  code: PackProblem['code'],
  pack: string | null,
  file: string,
  ruleId: string | null,
  path: string,
  message: string,
): PackProblem {
  return { code, pack, file, ruleId, path, message }
}

function toLoadedPack(pack: RulePack, source: PackSource): LoadedPack {
  const { $schema: _schema, ...manifest } = pack
  const rules = pack.rules.map(({ $schema: _ruleSchema, ...rule }) => rule)
  return deepFreeze({ ...manifest, rules, layer: source.layer, origin: source.origin })
}
