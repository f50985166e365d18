import { open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { RigfitError } from '@rigfit/core'
import { processAlive } from '@rigfit/core/node'

/**
 * The sibling paths of an export folder DIR: `.DIR.rigfit-lock` (the lock, holding its owner's pid),
 * `.DIR.rigfit-stage-PID` (a set being written), `.DIR.rigfit-ready-PID` (a complete set, about to be swapped in)
 * and `.DIR.rigfit-old-PID` (the folder it replaced, about to be removed). They sit beside DIR so that every
 * rename stays on one file system.
 */
export function siblings(dir: string) {
  const parent = dirname(dir)
  const prefix = `.${basename(dir)}.rigfit-`
  return {
    parent,
    prefix,
    lock: join(parent, `${prefix}lock`),
    stage: join(parent, `${prefix}stage-${process.pid}`),
    ready: join(parent, `${prefix}ready-${process.pid}`),
    old: join(parent, `${prefix}old-${process.pid}`),
  }
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null)) !== null
}

/** The pid a lock file names, or null when it names none (a writer killed between creating and filling it). */
async function lockOwner(lock: string): Promise<number | null> {
  const text = await readFile(lock, 'utf8').catch(() => '')
  const pid = Number.parseInt(text.trim(), 10)
  return Number.isInteger(pid) && pid > 0 ? pid : null
}

function lockedError(dir: string, pid: number | null): RigfitError {
  return new RigfitError(
    'exists',
    'E_EXPORT_LOCKED',
    `another rigfit export${pid ? ` (process ${pid})` : ''} is writing ${dir}; nothing was written`,
    {
      suggestion: `Wait for it to finish and export again, or choose another --out folder. A lock left by a process that no longer runs is taken over (${siblings(dir).lock}).`,
    },
  )
}

/**
 * Takes the folder's lock: creates the lock file exclusively with this pid. A lock whose owner no longer runs (a
 * killed export) is taken over; a live owner's refuses with exit 8, nothing written.
 */
export async function lockExportFolder(dir: string): Promise<() => Promise<void>> {
  const { lock } = siblings(dir)
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await open(lock, 'wx', 0o644)
      try {
        await handle.writeFile(`${process.pid}\n`)
      } catch (error) {
        // A full disk: the lock this export created goes with it, nothing left beside the folder.
        await handle.close()
        await unlink(lock).catch(() => {})
        throw error
      }
      await handle.close()
      return async () => {
        if ((await lockOwner(lock)) === process.pid) await unlink(lock).catch(() => {})
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const owner = await lockOwner(lock)
    if (owner !== null && owner !== process.pid && processAlive(owner)) throw lockedError(dir, owner)
    if (owner === null) {
      // Created but not yet filled by a writer that may still run: give it a moment before calling it stale.
      const age = Date.now() - ((await stat(lock).catch(() => null))?.mtimeMs ?? 0)
      if (age < 2000) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        continue
      }
    }
    // A stale lock: move it aside under a name of our own, so two takers cannot both remove a fresh one.
    const aside = `${lock}.stale-${process.pid}`
    await rename(lock, aside).catch(() => {})
    await rm(aside, { force: true })
  }
  throw lockedError(dir, await lockOwner(lock))
}

/**
 * Finishes or undoes what a killed export left beside the folder; call with the lock held. A complete set whose
 * swap was cut between its two renames (the folder moved aside, the new set not yet in place) is moved in; a set
 * not yet complete is removed, as is a replaced folder left aside. Afterwards the folder is wholly the old export
 * or wholly the new one. Returns what it did, for a warning.
 */
export async function recoverExportFolder(dir: string): Promise<string[]> {
  const { parent, prefix } = siblings(dir)
  const names = (await readdir(parent).catch(() => [] as string[])).filter((n) => n.startsWith(prefix))
  const done: string[] = []
  const ready = names.filter((n) => n.startsWith(`${prefix}ready-`))
  for (const name of ready) {
    if (!(await exists(dir))) {
      await rename(join(parent, name), dir)
      done.push(`completed an interrupted replacement of ${dir}`)
    } else await rm(join(parent, name), { recursive: true, force: true })
  }
  for (const name of names) {
    if (name.startsWith(`${prefix}stage-`) || name.startsWith(`${prefix}old-`)) {
      const pid = Number(name.slice(name.lastIndexOf('-') + 1))
      if (pid !== process.pid && processAlive(pid)) continue
      await rm(join(parent, name), { recursive: true, force: true })
    }
  }
  return done
}
