import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Command, Config } from '@oclif/core'
import { type LoadedPack, type PackProblem, printableLine, RigfitError } from '@rigfit/core'
import {
  displayPath,
  loadPacksIn,
  loadPluginPacks,
  type PluginRoot,
  type PrecheckedBundle,
  readPrecheckedBundle,
  sortPluginRoots,
  uniquePacks,
} from '@rigfit/core/node'
import type { PackHookResult, RigfitHooks } from '@rigfit/core/plugin'
import { type PackRoots, recordedPackRoots } from './recorded-pack-roots.js'

export type { LoadedPack, PackHookResult, PackProblem }

// The plugin contract is defined once in @rigfit/core/plugin; oclif's hook registry learns it here.
declare module '@oclif/core' {
  interface Hooks {
    'rigfit:packs': RigfitHooks['rigfit:packs']
  }
}

export interface PacksLoad {
  packs: LoadedPack[]
  problems: PackProblem[]
}

const HOOK_TIMEOUT_MS = 5000
const rootsByConfig = new WeakMap<Config, Promise<PackRoots>>()
const packsByKey = new Map<string, Promise<PacksLoad>>()

/**
 * The pack folders the installed plugins announce through the `rigfit:packs` hook, asked once per process.
 * A plugin whose hook fails or answers nonsense is reported and skipped.
 */
export function pluginPackRoots(command: Command): Promise<PackRoots> {
  const config = command.config
  let pending = rootsByConfig.get(config)
  if (!pending) {
    const recorded = recordedPackRoots()
    pending = recorded ? Promise.resolve(recorded) : askPlugins(config)
    rootsByConfig.set(config, pending)
  }
  return pending
}

async function askPlugins(config: Config): Promise<PackRoots> {
  const answer = await config.runHook('rigfit:packs', {}, HOOK_TIMEOUT_MS, true)
  const roots: PluginRoot[] = []
  const problems: PackProblem[] = []
  for (const { plugin, result } of answer.successes) {
    if (result === undefined || result === null) continue
    if (typeof result.name !== 'string' || typeof result.root !== 'string') {
      problems.push(
        pluginProblem(
          plugin.name,
          plugin.root,
          'its rigfit:packs hook must return { name, root } (two strings)',
        ),
      )
      continue
    }
    roots.push({ name: result.name, root: resolve(plugin.root, result.root), plugin: plugin.name })
  }
  for (const { plugin, error } of answer.failures) {
    problems.push(pluginProblem(plugin.name, plugin.root, `its rigfit:packs hook failed: ${error.message}`))
  }
  return { roots: sortPluginRoots(roots), problems }
}

function pluginProblem(plugin: string, root: string, message: string): PackProblem {
  return {
    code: 'E_PACK_PLUGIN',
    pack: null,
    file: displayPath(root),
    ruleId: null,
    path: '$',
    message: `plugin ${plugin}: ${message}`,
  }
}

/** The user's own packs: `<oclif configDir>/rules` (on Linux $XDG_CONFIG_HOME/rigfit/rules). */
export function userRulesDir(command: Command): string {
  return join(command.config.configDir, 'rules')
}

/**
 * Every rule pack in force: the core defaults, each installed plugin's pack, the user's packs in the config
 * folder, and `--rules DIR`. A broken pack is reported in `problems` and left out; the others load. Loaded
 * once per process and folder, so every plan of a run shares one set of packs (and one rules engine).
 */
export function loadAllPacks(command: Command, opts: { rulesDir?: string } = {}): Promise<PacksLoad> {
  let rulesDir: string | undefined
  try {
    rulesDir = opts.rulesDir === undefined ? undefined : requireRulesPath(opts.rulesDir)
  } catch (error) {
    return Promise.reject(error)
  }
  const key = `${command.config.configDir}\u0000${rulesDir ?? ''}`
  let pending = packsByKey.get(key)
  if (!pending) {
    pending = collectPacks(command, rulesDir)
    packsByKey.set(key, pending)
  }
  return pending
}

/** Where the build writes the bundled packs, validated once (`scripts/prechecked-packs.mjs`). */
export const PRECHECKED_PACKS_FILE = join('dist', 'prechecked-packs.json')

/**
 * The packs validated when rigfit was built; null when the file is missing or fails its hash, and then every
 * pack is validated in full.
 */
export function precheckedPacks(command: Command): PrecheckedBundle | null {
  const read = readPrecheckedBundle(join(command.config.root, PRECHECKED_PACKS_FILE))
  return read.ok ? read.bundle : null
}

async function collectPacks(command: Command, rulesDir: string | undefined): Promise<PacksLoad> {
  const prechecked = precheckedPacks(command)
  const { roots, problems } = await pluginPackRoots(command)
  const vendor = loadPluginPacks(roots, prechecked)
  const all = vendor.packs
  const found = [...problems, ...vendor.problems]
  for (const dir of [userRulesDir(command), ...(rulesDir === undefined ? [] : [rulesDir])]) {
    const result = loadPacksIn(dir, { layer: 'user', kind: 'user' })
    if (dir === rulesDir && result.packs.length === 0 && result.problems.length === 0)
      throw emptyRulesPath(dir)
    // A pack named on the command line is what the user asked for: planning without it would be a silent lie.
    if (dir === rulesDir && result.problems.length > 0) throw invalidRulesPath(dir, result.problems)
    all.push(...result.packs)
    found.push(...result.problems)
  }
  const unique = uniquePacks(all)
  return { packs: unique.packs, problems: [...found, ...unique.problems] }
}

/**
 * The absolute path of `--rules PATH`, checked before any work starts: a missing path is an input error that
 * names it, with a suggestion (exit 3; with --json, a JSON error object on stdout).
 */
export function requireRulesPath(path: string): string {
  const absolute = resolve(path)
  if (!existsSync(absolute)) {
    throw new RigfitError(
      'input',
      'E_RULES_DIR',
      `--rules ${path}: no such file or directory (${absolute}).`,
      {
        suggestion:
          'Point --rules at a pack folder (with pack.json), a single-file pack, or a folder of packs; `rigfit rules validate PATH` checks one.',
        details: { path: absolute },
      },
    )
  }
  return absolute
}

/** `--rules PATH` holds a pack that does not load: every problem, with file, rule and JSON path. */
function invalidRulesPath(path: string, problems: PackProblem[]): RigfitError {
  return new RigfitError(
    'validation',
    'E_PACK_INVALID',
    `--rules ${displayPath(path)}: ${problems.length} problem(s):\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}`,
    {
      suggestion: `Fix each listed key (\`rigfit rules validate ${displayPath(path)}\` checks the pack); docs/rules.md lists what a rule may use.`,
      details: problems,
    },
  )
}

/** `--rules PATH` names a folder in which no pack was found: a mistyped path must not plan with no user rules. */
function emptyRulesPath(path: string): RigfitError {
  return new RigfitError('input', 'E_RULES_DIR', `--rules ${displayPath(path)}: holds no rule pack.`, {
    suggestion:
      'Point --rules at a pack folder (with pack.json and rules/<id>.json), a single-file pack, or a folder of packs; `rigfit rules validate PATH` checks one.',
    details: { path },
  })
}

/** One line per problem: file, rule and JSON path, then what is wrong. */
export function formatProblem(problem: PackProblem): string {
  // File names, ids, paths and quoted values come from the pack: one line each, nothing that acts on a terminal.
  const rule = problem.ruleId ? ` rule "${printableLine(problem.ruleId)}"` : ''
  const where = problem.path === '$' ? '' : ` at ${printableLine(problem.path)}`
  const file = printableLine(problem.file)
  const head = rule === '' && where === '' ? file : `${file}:${rule}${where}`
  return `${head}: ${printableLine(problem.message)}`
}
