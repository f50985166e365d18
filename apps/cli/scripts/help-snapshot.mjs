#!/usr/bin/env node
// Records the help oclif prints for `rigfit`, `rigfit --help` and `rigfit <command, alias or topic> --help` into
// bundle/help.json, which src/fast-start.ts answers from without loading oclif. oclif renders them here, in a
// child whose output is a pipe (80 columns, no colour) and whose data folder is empty (no user plugins): the
// conditions under which fast-start answers. Run from apps/cli after the bundle and `oclif manifest`.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const USER_AGENT_MARK = '\u0000user-agent\u0000'

if (process.argv[2] === '--render') {
  // In the child: print every help text through oclif's own run(), as the CLI does, capturing what it writes.
  const { Config, run } = await import('@oclif/core')
  const config = await Config.load(process.cwd())
  const argvs = [[], ['--help']]
  for (const command of config.commands)
    for (const id of [command.id, ...(command.aliases ?? [])]) argvs.push([...id.split(':'), '--help'])
  for (const topic of config.topics) argvs.push([...topic.name.split(':'), '--help'])
  const help = {}
  const write = process.stdout.write
  for (const argv of argvs) {
    let text = ''
    process.stdout.write = (chunk) => {
      text += String(chunk)
      return true
    }
    try {
      await run(argv, process.cwd())
    } finally {
      process.stdout.write = write
    }
    help[argv.join(' ')] = text.replaceAll(config.userAgent, USER_AGENT_MARK)
  }
  const nameVersion = `${config.name}/${config.version}`
  process.stdout.write(JSON.stringify({ nameVersion, userAgentMark: USER_AGENT_MARK, help }))
} else {
  const data = mkdtempSync(join(tmpdir(), 'rigfit-help-'))
  const env = { ...process.env, XDG_DATA_HOME: data }
  for (const name of ['FORCE_COLOR', 'OCLIF_COLUMNS', 'RIGFIT_DATA_DIR', 'PM2_HOME', 'NEXT_RUNTIME'])
    delete env[name]
  const result = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--render'], {
    encoding: 'utf8',
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  })
  rmSync(data, { recursive: true, force: true })
  if (result.status !== 0) throw new Error(`help-snapshot: rendering failed (exit ${result.status})`)
  const snapshot = JSON.parse(result.stdout)
  const target = join('bundle', 'help.json')
  writeFileSync(`${target}.tmp`, JSON.stringify(snapshot))
  renameSync(`${target}.tmp`, target)
  const commands = JSON.parse(readFileSync('oclif.manifest.json', 'utf8')).commands
  console.log(
    `help-snapshot: ${Object.keys(snapshot.help).length} help texts (${Object.keys(commands).length} rigfit commands) into ${target}`,
  )
}
