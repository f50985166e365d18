import { open, readFile, rename, rm, stat } from 'node:fs/promises'
import { setTimeout as delay } from 'node:timers/promises'
import { RigfitError } from '@rigfit/core'
import { processAlive } from '@rigfit/core/node'

const WAIT_MS = 10_000
const POLL_MS = 50

async function ownerOf(lock: string): Promise<number | null> {
  const pid = Number.parseInt((await readFile(lock, 'utf8').catch(() => '')).trim(), 10)
  return Number.isInteger(pid) && pid > 0 ? pid : null
}

/**
 * Holds `<store>.lock` while `work` runs. Writers of the store are short (read, append a line, rename), so a
 * second writer waits for the first rather than failing; a lock whose owner no longer runs is taken over. After
 * ten seconds of a live owner, exit 8 with the owner named, nothing written.
 */
export async function withStoreLock<T>(store: string, work: () => Promise<T>): Promise<T> {
  const lock = `${store}.lock`
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o644)
      try {
        await handle.writeFile(`${process.pid}\n`)
      } finally {
        await handle.close()
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const owner = await ownerOf(lock)
    const age = Date.now() - ((await stat(lock).catch(() => null))?.mtimeMs ?? 0)
    const stale = owner === null ? age > 2000 : owner !== process.pid && !processAlive(owner)
    if (stale) {
      // Moved aside under our own name first, so two takers cannot both remove a fresh lock.
      const aside = `${lock}.stale-${process.pid}`
      await rename(lock, aside).catch(() => {})
      await rm(aside, { force: true })
      continue
    }
    if (Date.now() > deadline) {
      throw new RigfitError(
        'exists',
        'E_CALIBRATION_LOCKED',
        `the calibration store ${store} is locked by ${owner ? `process ${owner}` : 'another rigfit'}; nothing was written`,
        {
          suggestion: `Try again when it has finished; a lock left by a process that no longer runs (${lock}) is taken over.`,
        },
      )
    }
    await delay(POLL_MS)
  }
  try {
    return await work()
  } finally {
    if ((await ownerOf(lock)) === process.pid) await rm(lock, { force: true })
  }
}
