#!/usr/bin/env node
// Records what src/command-start.ts needs to start rigfit's own commands without oclif loading the plugins, into
// bundle/start.json: the ids and aliases of rigfit's commands that no plugin command or topic extends, and what
// each bundled plugin's `rigfit:packs` hook answers (its root relative to the plugin's package folder, so the
// record holds wherever rigfit is installed). oclif loads the CLI here as it does at a start with no user plugins.
// Run from apps/cli after the bundle and `oclif manifest`.
import { mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve, sep } from 'node:path'

// An empty data folder: the user plugins of whoever builds stay out of the record.
const data = mkdtempSync(join(tmpdir(), 'rigfit-start-'))
process.env.RIGFIT_DATA_DIR = data
try {
  const { Config } = await import('@oclif/core')
  const config = await Config.load(process.cwd())
  const others = config.getPluginsList().filter((plugin) => plugin !== config.rootPlugin)
  // A first word that another plugin's command or topic also starts with could resolve otherwise there.
  const taken = new Set(
    others
      .flatMap((plugin) => [
        ...plugin.commands.flatMap((command) => [command.id, ...(command.aliases ?? [])]),
        ...plugin.topics.map((topic) => topic.name),
      ])
      .map((id) => id.split(':')[0]),
  )
  const commands = config.rootPlugin.commands
    .flatMap((command) => [command.id, ...(command.aliases ?? [])])
    .filter((id) => !taken.has(id.split(':')[0]))
    .sort()
  const answer = await config.runHook('rigfit:packs', {}, 5000, true)
  if (answer.failures.length > 0)
    throw new Error(`start-record: a rigfit:packs hook failed: ${answer.failures[0].error.message}`)
  const packs = answer.successes
    .filter(({ result }) => result !== undefined && result !== null)
    .map(({ plugin, result }) => ({
      plugin: plugin.name,
      name: result.name,
      root: relative(realpathSync(plugin.root), resolve(plugin.root, result.root)).split(sep).join('/'),
    }))
    .sort((a, b) => (a.plugin < b.plugin ? -1 : a.plugin > b.plugin ? 1 : 0))
  const target = join('bundle', 'start.json')
  writeFileSync(`${target}.tmp`, `${JSON.stringify({ commands, packs }, null, 2)}\n`)
  renameSync(`${target}.tmp`, target)
  console.log(`start-record: ${commands.length} command ids, ${packs.length} plugin packs into ${target}`)
} finally {
  rmSync(data, { recursive: true, force: true })
}
