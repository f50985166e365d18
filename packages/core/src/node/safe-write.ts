import { randomBytes } from 'node:crypto'
import { link, lstat, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { RigfitError } from '../errors.js'

/**
 * How rigfit replaces a file. `--force` replaces a regular file only: a link is never followed into the file it
 * names (nor replaced), and a device, FIFO, socket or folder is never replaced (`--out /dev/null --force` as root
 * would otherwise turn /dev/null into a regular file). Writes go to a temporary file beside the target and are
 * renamed into place, so a reader sees the old file or the new one; temporaries left by a killed rigfit are
 * removed at the next write beside them.
 */

const TEMPORARY = /^\.(.+)\.(\d+)\.([0-9a-f]{8})\.tmp$/

/** The temporary a write of `target` goes through: `.<name>.<pid>.<random>.tmp` in the same folder. */
export function temporaryPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
}

/** Whether a process id names a running process (EPERM: alive, another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Removes the temporaries of `target` whose writer is gone (killed before its rename). Returns those removed. */
export async function removeStaleTemporaries(target: string): Promise<string[]> {
  const dir = dirname(target)
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return []
  }
  const removed: string[] = []
  for (const name of names) {
    const match = TEMPORARY.exec(name)
    if (match === null || match[1] !== basename(target)) continue
    const pid = Number(match[2])
    if (pid === process.pid || processAlive(pid)) continue
    const path = join(dir, name)
    // Only a regular file of ours: never a link or anything else that happens to match the name.
    const stat = await lstat(path).catch(() => null)
    if (stat?.isFile() !== true) continue
    await rm(path, { force: true })
    removed.push(path)
  }
  return removed
}

/** What sits at `path` now, as far as replacing it goes. */
export async function existingKind(path: string): Promise<'none' | 'file' | 'link' | 'dir' | 'special'> {
  try {
    const stat = await lstat(path)
    if (stat.isSymbolicLink()) return 'link'
    if (stat.isFile()) return 'file'
    if (stat.isDirectory()) return 'dir'
    return 'special'
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'none'
    throw error
  }
}

/** Throws unless `path` may be written: nothing there, or a regular file and `force`. */
export async function assertReplaceable(path: string, force: boolean): Promise<void> {
  const kind = await existingKind(path)
  if (kind === 'none' || (kind === 'file' && force)) return
  if (kind === 'file') {
    throw new RigfitError('exists', 'E_EXISTS', `${path} already exists; it was left as it is.`, {
      suggestion: 'Pass --force to replace it, or choose another file name.',
    })
  }
  const what = { link: 'a link', dir: 'a folder', special: 'not a regular file (a device, FIFO or socket)' }[
    kind
  ]
  throw new RigfitError('exists', 'E_NOT_REGULAR', `${path} is ${what}; rigfit replaces regular files only`, {
    suggestion: 'Choose another file name: --force replaces regular files, never links, devices or FIFOs.',
  })
}

/**
 * Writes a whole file or nothing, under the rules above. Without `force` an existing file is never replaced,
 * even one that appears between the check and the rename.
 */
export async function writeFileSafely(
  path: string,
  text: string,
  options: { force: boolean; mode?: number },
): Promise<void> {
  await removeStaleTemporaries(path)
  await assertReplaceable(path, options.force)
  const temporary = temporaryPathFor(path)
  try {
    await writeFile(temporary, text, { flag: 'wx', mode: options.mode ?? 0o644 })
    // A target that became something else since the check is refused, not replaced.
    await assertReplaceable(path, options.force)
    if (options.force) await rename(temporary, path)
    else {
      // link() fails where a file appeared meanwhile, where rename() would replace it.
      await link(temporary, path).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') return assertReplaceable(path, false)
        throw error
      })
    }
  } finally {
    await rm(temporary, { force: true })
  }
}
