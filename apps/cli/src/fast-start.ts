/**
 * Answers `rigfit --version`, `rigfit`, `rigfit --help` and `rigfit <command or topic> --help` without loading
 * oclif, from the help texts oclif rendered at build time (scripts/help-snapshot.mjs writes bundle/help.json).
 * Shell completion and scripts call these often; oclif's own start costs several times Node's.
 *
 * It answers only where oclif would print exactly the recorded text: the output is not a terminal (no colour,
 * 80 columns), nothing forces colour or a width, no user or linked plugin is installed (they add commands, topics
 * and hooks), and not under WSL (oclif names the platform "wsl" there). Anywhere else it declines and oclif runs.
 */
import { existsSync, readFileSync } from 'node:fs'
import { arch, homedir, platform, release } from 'node:os'
import { join } from 'node:path'

interface HelpSnapshot {
  /** `${name}/${version}`, the start of oclif's user agent. */
  nameVersion: string
  /** Where each text holds the user agent (which names this Node), this placeholder stands instead. */
  userAgentMark: string
  /** Help texts by the argv that prints them, joined with spaces ('' is `rigfit` alone). */
  help: Record<string, string>
}

const SNAPSHOT = new URL('./help.json', import.meta.url)

/** True when it has answered; false when oclif must run. */
export function fastStart(argv: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  const versionAsked = argv.length === 1 && argv[0] === '--version'
  const helpAsked = argv.length === 0 || argv.at(-1) === '--help'
  if (!versionAsked && !helpAsked) return false
  if (process.stdout.isTTY || !plainOutput(env) || userPluginsPossible(env) || onWsl()) return false
  let snapshot: HelpSnapshot
  try {
    snapshot = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as HelpSnapshot
  } catch {
    return false
  }
  const userAgent = `${snapshot.nameVersion} ${platform()}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}`
  if (versionAsked) {
    process.stdout.write(`${userAgent}\n`)
    return true
  }
  const text = Object.hasOwn(snapshot.help, argv.join(' ')) ? snapshot.help[argv.join(' ')] : undefined
  if (text === undefined) return false
  process.stdout.write(text.replaceAll(snapshot.userAgentMark, userAgent))
  return true
}

/** What makes oclif's colour library colour a pipe, or oclif choose another width. */
function plainOutput(env: NodeJS.ProcessEnv): boolean {
  return (
    env.FORCE_COLOR === undefined &&
    env.OCLIF_COLUMNS === undefined &&
    !(env.PM2_HOME && env.pm_id) &&
    env.NEXT_RUNTIME === undefined
  )
}

/** oclif reads user and linked plugins from package.json in its data folder; any such file may name some. */
export function userPluginsPossible(env: NodeJS.ProcessEnv = process.env): boolean {
  if (platform() === 'win32') return true
  const dataDir =
    env.RIGFIT_DATA_DIR || join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local/share'), 'rigfit')
  return existsSync(join(dataDir, 'package.json'))
}

/** is-wsl's test, read more broadly: any mention of Microsoft in the kernel's name. */
function onWsl(): boolean {
  if (platform() !== 'linux') return false
  if (/microsoft/i.test(release())) return true
  try {
    return /microsoft/i.test(readFileSync('/proc/version', 'utf8'))
  } catch {
    return false
  }
}
