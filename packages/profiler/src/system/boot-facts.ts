import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import os from 'node:os'
import { join } from 'node:path'
import { readValue } from './read.js'

/**
 * systeminformation answers that cannot change while the machine stays up: the CPU (vendor, brand, clocks, ISA
 * flags), the system (virtualisation) and the OS release. Asking for them costs a worker thread, systeminformation's
 * own start and a dozen child processes (lscpu, dmidecode, hostname), several times the CPU of the rest of a
 * profile; so they are kept for the boot they were read in and read back by every later profile of that boot.
 * Memory, disks, battery, graphics and temperatures change and are always asked afresh.
 */
export const BOOT_STATIC_FUNCTIONS: ReadonlySet<string> = new Set(['cpu', 'system', 'osInfo'])

/** Where the boot's facts are kept: the user's cache folder, as each platform names it. */
export function bootFactsPath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CACHE_HOME?.trim()
  const home = env.HOME?.trim() || os.homedir()
  const base = xdg
    ? xdg
    : process.platform === 'darwin'
      ? join(home, 'Library', 'Caches')
      : process.platform === 'win32'
        ? env.LOCALAPPDATA?.trim() || join(home, 'AppData', 'Local')
        : join(home, '.cache')
  return join(base, 'rigfit', 'boot-facts.json')
}

/** Off where RIGFIT_NO_CACHE is set (to anything but 0): every profile then asks systeminformation afresh. */
export function bootFactsEnabled(env: NodeJS.ProcessEnv): boolean {
  const value = env.RIGFIT_NO_CACHE?.trim()
  return value === undefined || value === '' || value === '0'
}

/**
 * What the kept answers depend on. The boot (Linux's boot id; elsewhere the boot time, to a few seconds), the host,
 * the kernel and the CPUs Node sees, the systeminformation release, and PATH, since the answers come from the tools
 * found on it. Any difference and the answers are asked again.
 */
interface BootKey {
  format: 1
  bootId: string | null
  bootTimeS: number
  hostname: string
  kernel: string
  cpus: string
  systeminformation: string
  path: string
}

interface BootFacts {
  key: BootKey
  /** systeminformation results by function name. */
  results: Record<string, unknown>
}

/** How far apart two readings of the boot time (now minus uptime) may be and still name the same boot. */
const BOOT_TIME_TOLERANCE_S = 5
/** The kept file is a few kilobytes; anything far larger is not ours. */
const MAX_FACTS_BYTES = 1024 * 1024

export async function currentBootKey(env: NodeJS.ProcessEnv): Promise<BootKey> {
  const cpus = os.cpus()
  return {
    format: 1,
    bootId: process.platform === 'linux' ? await readValue('/proc/sys/kernel/random/boot_id') : null,
    bootTimeS: Math.round(Date.now() / 1000 - os.uptime()),
    hostname: os.hostname(),
    kernel: os.release(),
    cpus: `${cpus.length} × ${cpus[0]?.model ?? 'unknown'}`,
    systeminformation: systemInformationVersion(),
    path: env.PATH ?? env.Path ?? '',
  }
}

function systemInformationVersion(): string {
  try {
    const require = createRequire(import.meta.url)
    return String((require('systeminformation/package.json') as { version?: unknown }).version ?? 'unknown')
  } catch {
    return 'unknown'
  }
}

function sameBoot(kept: BootKey, now: BootKey): boolean {
  const bootMatches =
    kept.bootId !== null || now.bootId !== null
      ? kept.bootId === now.bootId
      : Math.abs(kept.bootTimeS - now.bootTimeS) <= BOOT_TIME_TOLERANCE_S
  return (
    kept.format === now.format &&
    bootMatches &&
    kept.hostname === now.hostname &&
    kept.kernel === now.kernel &&
    kept.cpus === now.cpus &&
    kept.systeminformation === now.systeminformation &&
    kept.path === now.path
  )
}

/** The answers kept for this boot, by function name; empty when there are none, or they belong to another boot. */
export async function readBootFacts(path: string, key: BootKey): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    return {}
  }
  if (text.length > MAX_FACTS_BYTES) return {}
  try {
    const facts = JSON.parse(text) as Partial<BootFacts>
    if (!facts.key || typeof facts.results !== 'object' || facts.results === null) return {}
    if (!sameBoot(facts.key, key)) return {}
    const results: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(facts.results)) {
      if (BOOT_STATIC_FUNCTIONS.has(name) && typeof value === 'object' && value !== null)
        results[name] = value
    }
    return results
  } catch {
    return {}
  }
}

/**
 * Keeps this boot's answers, replacing another boot's. Written whole to a temporary file and renamed over the old
 * one, so a profile running alongside reads one version or the other. A cache that cannot be written only costs
 * the next profile its time: the error is returned for the raw record, never thrown.
 */
export async function writeBootFacts(
  path: string,
  key: BootKey,
  results: Record<string, unknown>,
): Promise<string | null> {
  const kept = Object.fromEntries(Object.entries(results).filter(([name]) => BOOT_STATIC_FUNCTIONS.has(name)))
  const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`
  try {
    await mkdir(join(path, '..'), { recursive: true })
    await writeFile(temporary, `${JSON.stringify({ key, results: kept } satisfies BootFacts)}\n`, {
      mode: 0o600,
    })
    await rename(temporary, path)
    return null
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {})
    return error instanceof Error ? error.message : String(error)
  }
}
