import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LoadedPack } from '../packs/loaded-pack.js'
import type { PackHook } from '../plugin.js'
import { ruleDocProblems } from '../rules/rule-docs.js'
import { RuleTester, type TestFunction } from '../rules/rule-tester.js'
import { HardwareProfile } from '../schemas/hardware-profile.js'
import type { PackLayer } from '../schemas/rule-pack.js'
import { loadCorePack } from './core-pack.js'
import { listJsonFiles } from './files.js'
import { loadPackCases } from './load-cases.js'
import { loadPackPath } from './load-pack.js'
import { loadCatalogFile } from './prechecked-catalogs.js'

export interface PackDirectoryTestOptions {
  describe: TestFunction
  it: TestFunction
  /** core for the core defaults pack; vendor (the default) for a plugin's pack. */
  layer?: PackLayer
  /** The plugin's `rigfit:packs` hook: checked to name this pack and this folder. */
  hook?: PackHook
}

/**
 * The whole test suite of a pack folder, for a plugin's (or core's) test file: the pack loads cleanly; rule ids
 * match file names; every rule has docs/<id>.md and every doc a rule; every JSON file has sorted keys; every
 * fixture is a valid HardwareProfile; the catalog (if any) is valid and holds the pack's family only; and the
 * cases in cases/*.json pass, with every rule fired by at least one of them.
 */
export function testPackDirectory(root: string | URL, options: PackDirectoryTestOptions): void {
  const dir = typeof root === 'string' ? root : fileURLToPath(root)
  const layer = options.layer ?? 'vendor'
  const { describe, it } = options
  const loaded = loadPackPath(dir, { layer, kind: layer === 'core' ? 'core' : 'plugin' })
  const name = loaded.pack?.meta.name ?? dir

  describe(`${name} pack folder`, () => {
    it('loads without problems', () => {
      if (!loaded.pack)
        throw new Error(loaded.problems.map((p) => `${p.file} ${p.path}: ${p.message}`).join('\n'))
    })
    it('has one rules/<id>.json per rule and one docs/<id>.md per rule', () => assertRulesPaired(dir))
    it('has docs that match their rules: description, pack, decision, priority, facts and message', () =>
      assertDocsMatch(dir, loaded.pack, name))
    it('keeps JSON keys sorted', () => assertSortedKeys(dir))
    it('has fixtures that are valid hardware profiles', () => assertValidFixtures(dir))
    const { hook } = options
    if (hook) {
      it('has a rigfit:packs hook that names this pack and folder', () =>
        assertHookNamesPack(hook, name, dir))
    }
    if (existsSync(join(dir, 'catalog.json'))) {
      it('has a valid GPU catalog of its own family', () => assertOwnCatalog(dir, name))
    }
  })

  if (!loaded.pack) return
  const { cases, problems } = loadPackCases(dir)
  if (problems.length > 0) {
    it(`${name} cases load`, () => {
      throw new Error(problems.map((p) => `${p.file} ${p.path}: ${p.message}`).join('\n'))
    })
    return
  }
  new RuleTester(loaded.pack, { describe, it, corePack: loadCorePack }).run(
    `${name} rules`,
    { cases },
    { requireEveryRuleFired: true },
  )
}

/** Each rule has its docs/<id>.md and each doc its rule; a rule file holds the rule its name says. */
function assertRulesPaired(dir: string): void {
  const ruleIds = listJsonFiles(join(dir, 'rules')).map((file) => file.slice(0, -'.json'.length))
  const docIds = listFiles(join(dir, 'docs'), '.md')
  const missing = ruleIds.filter((id) => !docIds.includes(id))
  const orphans = docIds.filter((id) => !ruleIds.includes(id))
  if (missing.length > 0) throw new Error(`rules without docs/<id>.md: ${missing.join(', ')}`)
  if (orphans.length > 0) throw new Error(`docs without a rule: ${orphans.join(', ')}`)
  for (const id of ruleIds) {
    const rule = JSON.parse(readFileSync(join(dir, 'rules', `${id}.json`), 'utf8')) as { id?: unknown }
    if (rule.id !== id) throw new Error(`rules/${id}.json holds rule id ${JSON.stringify(rule.id)}`)
  }
}

/** Every rule's doc states its description, pack, decision, priority, facts and message as the rule does. */
function assertDocsMatch(dir: string, pack: LoadedPack | null | undefined, name: string): void {
  if (!pack) throw new Error('the pack does not load')
  const problems = pack.rules.flatMap((rule) => {
    const path = join(dir, 'docs', `${rule.id}.md`)
    if (!existsSync(path)) return []
    const doc = readFileSync(path, 'utf8')
    return ruleDocProblems(doc, rule, pack.meta.name ?? name).map((p) => `docs/${rule.id}.md: ${p}`)
  })
  if (problems.length > 0) throw new Error(problems.join('\n'))
}

/** pack.json, catalog.json, rules and cases keep their keys in code-point order. */
function assertSortedKeys(dir: string): void {
  const files = [
    'pack.json',
    'catalog.json',
    ...listJsonFiles(join(dir, 'rules')).map((f) => `rules/${f}`),
    ...listJsonFiles(join(dir, 'cases')).map((f) => `cases/${f}`),
  ].filter((file) => existsSync(join(dir, file)))
  const unsorted = files.flatMap((file) =>
    unsortedPaths(JSON.parse(readFileSync(join(dir, file), 'utf8')), file),
  )
  if (unsorted.length > 0) throw new Error(`keys out of order:\n${unsorted.slice(0, 20).join('\n')}`)
}

function assertValidFixtures(dir: string): void {
  for (const file of listJsonFiles(join(dir, 'fixtures'))) {
    const parsed = HardwareProfile.safeParse(JSON.parse(readFileSync(join(dir, 'fixtures', file), 'utf8')))
    if (!parsed.success)
      throw new Error(
        `fixtures/${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      )
  }
}

async function assertHookNamesPack(hook: PackHook, name: string, dir: string): Promise<void> {
  // A plugin written in JavaScript is not type-checked: check the answer's shape too.
  const result = (await hook({})) as { name?: unknown; root?: unknown } | undefined
  if (result?.name !== name)
    throw new Error(`the hook names pack ${JSON.stringify(result?.name)}, pack.json says "${name}"`)
  if (typeof result.root !== 'string' || resolve(result.root) !== resolve(dir)) {
    throw new Error(`the hook points at ${JSON.stringify(result.root)}, not ${dir}`)
  }
}

function assertOwnCatalog(dir: string, name: string): void {
  const { entries, problems } = loadCatalogFile(join(dir, 'catalog.json'))
  if (problems.length > 0) throw new Error(problems.map((p) => `${p.path}: ${p.message}`).join('\n'))
  const foreign = entries.filter((entry) => entry.family !== name)
  if (foreign.length > 0) throw new Error(`entries of another family: ${foreign.map((e) => e.id).join(', ')}`)
}

function listFiles(dir: string, extension: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((file) => file.endsWith(extension))
    .map((file) => file.slice(0, -extension.length))
    .sort()
}

/** JSON paths of objects whose keys are not in code-point order. */
export function unsortedPaths(value: unknown, at: string): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => unsortedPaths(item, `${at}[${index}]`))
  if (value === null || typeof value !== 'object') return []
  const keys = Object.keys(value)
  const sorted = [...keys].sort()
  const here = keys.some((key, index) => key !== sorted[index]) ? [`${at}: ${keys.join(', ')}`] : []
  return [
    ...here,
    ...keys.flatMap((key) => unsortedPaths((value as Record<string, unknown>)[key], `${at}.${key}`)),
  ]
}
