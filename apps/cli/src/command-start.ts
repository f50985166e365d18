/**
 * Starts one of rigfit's own commands without oclif loading its plugins. oclif's start reads each bundled plugin's
 * package.json and manifest and matches them against the dependencies, yet for rigfit's own commands the plugins
 * add nothing but their rule packs, which their `rigfit:packs` hooks name. The build records what those hooks
 * answered (scripts/start-record.mjs writes bundle/start.json); here the command starts with the root plugin
 * alone and the packs are found from that record.
 *
 * It applies only where the outcome is the same as oclif's full start: the command is one of rigfit's own that no
 * plugin command or topic extends, no --help or --version (their help lists every plugin's commands), no user or
 * linked plugin can be installed (oclif's data folder holds no package.json), and every bundled plugin is where
 * it was. Anywhere else oclif starts as before.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { Interfaces } from '@oclif/core'
import type { PluginRoot } from '@rigfit/core/node'

interface StartRecord {
  /** rigfit's own command ids and aliases (words joined with ':') that no plugin command or topic extends. */
  commands: string[]
  /** What each bundled plugin's `rigfit:packs` hook answered, its root relative to the plugin's package folder. */
  packs: { plugin: string; name: string; root: string }[]
}

export interface CommandStart {
  /** oclif's load options: rigfit's package.json with no plugins to load. */
  loadOptions: { root: string; pjson: Interfaces.PJSON }
  packRoots: PluginRoot[]
}

/**
 * The start of a command without its plugins; null where oclif must start in full. `userPluginsPossible` is
 * fast-start's answer (bin/run.js passes it on, so that neither entry loads the other's code).
 */
export function commandStart(
  argv: string[],
  cliRoot: string,
  userPluginsPossible: boolean,
): CommandStart | null {
  // oclif answers these itself, listing every plugin's commands and topics.
  if (userPluginsPossible || argv.some((arg) => arg === '--help' || arg === '--version')) return null
  let record: StartRecord
  let pjson: Interfaces.PJSON
  try {
    record = JSON.parse(readFileSync(join(cliRoot, 'bundle', 'start.json'), 'utf8')) as StartRecord
    pjson = JSON.parse(readFileSync(join(cliRoot, 'package.json'), 'utf8'))
  } catch {
    return null
  }
  if (!record.commands.some((id) => id.split(':').every((word, index) => argv[index] === word))) return null
  const require = createRequire(join(cliRoot, 'package.json'))
  const packRoots: PluginRoot[] = []
  for (const pack of record.packs) {
    let packageJson: string
    try {
      packageJson = require.resolve(`${pack.plugin}/package.json`)
    } catch {
      return null
    }
    packRoots.push({ name: pack.name, root: join(dirname(packageJson), pack.root), plugin: pack.plugin })
  }
  return {
    loadOptions: { root: cliRoot, pjson: { ...pjson, oclif: { ...pjson.oclif, plugins: [] } } },
    packRoots,
  }
}
