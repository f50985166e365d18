import {
  chmod,
  copyFile,
  link,
  lstat,
  mkdir,
  readdir,
  readlink,
  realpath,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { type ExportManifest, RigfitError } from '@rigfit/core'
import { lockExportFolder, recoverExportFolder, siblings } from './folder-lock.js'
import type { ExportFile } from './types.js'
import { checkExportTargets, exportTargetPath, ioError } from './write-files.js'

/** What a folder write did: the files written, the files of the folder kept that no manifest lists, and notes. */
export interface FolderWrite {
  written: string[]
  /** Paths (relative to the folder) kept from before that no earlier export lists: the user's own files. */
  keptUnlisted: string[]
  /** Paths removed: files of the replaced export that the new one does not write. */
  removed: string[]
  /** What recovery did with a killed export's leftovers. */
  recovered: string[]
}

/** Every file under a folder, as paths relative to it (links listed as themselves, not followed). */
async function listTree(root: string, under = ''): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(join(root, under), { withFileTypes: true })) {
    const path = under === '' ? entry.name : `${under}/${entry.name}`
    if (entry.isDirectory()) out.push(...(await listTree(root, path)))
    else out.push(path)
  }
  return out
}

/** Puts a kept file into the new set: a hard link (the same file, no copy), else a copy; links stay links. */
async function carry(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true })
  const info = await lstat(from)
  if (info.isSymbolicLink()) return symlink(await readlink(from), to)
  try {
    await link(from, to)
  } catch {
    await copyFile(from, to)
    await chmod(to, info.mode & 0o7777)
  }
}

/**
 * The files of the folder that the new set drops: those an earlier export of this format listed that neither
 * the new export nor another format's entry (kept in the manifest) lists. Nothing else is ever removed.
 */
function droppedFiles(earlier: ExportManifest | null, format: string, written: Set<string>): Set<string> {
  if (!earlier) return new Set()
  const kept = new Set(
    earlier.exports.filter((e) => e.format !== format).flatMap((e) => e.files.map((f) => f.path)),
  )
  const replaced = earlier.exports
    .filter((e) => e.format === format)
    .flatMap((e) => e.files.map((f) => f.path))
  return new Set(replaced.filter((path) => !written.has(path) && !kept.has(path)))
}

/**
 * Writes an export into `outDir` as one change: under the folder's lock, the whole new set (the files kept from the
 * folder, hard-linked, and the new files) is written into a sibling folder, which replaces the folder with one
 * rename once it is complete (the old folder is moved aside first, then removed). A kill at any moment leaves the
 * old folder or the new one; leftovers of a killed export are cleaned up, or its swap finished, by the next one.
 * Files of the replaced export that the new one does not write go only if the earlier manifest lists them;
 * anything else in the folder is kept (and reported, for a warning). Refuses existing files without `force`.
 */
export async function writeExportFolder(
  outDir: string,
  files: ExportFile[],
  options: { force: boolean; ownFiles: string[]; format: string; earlier: ExportManifest | null },
): Promise<FolderWrite> {
  // A link to a folder is followed: the folder it names is the one replaced.
  const dir = await realpath(outDir).catch(() => outDir)
  const createdParent = await mkdir(dirname(dir), { recursive: true })
  try {
    return await writeLocked(dir, outDir, files, options)
  } catch (error) {
    // A failed export (a full disk) leaves no folder it created, not even the parent of --out.
    if (createdParent !== undefined) await rm(createdParent, { recursive: true, force: true })
    throw error instanceof RigfitError ? error : ioError(`cannot write the export to ${outDir}`, error)
  }
}

async function writeLocked(
  dir: string,
  outDir: string,
  files: ExportFile[],
  options: { force: boolean; ownFiles: string[]; format: string; earlier: ExportManifest | null },
): Promise<FolderWrite> {
  const unlock = await lockExportFolder(dir)
  try {
    const recovered = await recoverExportFolder(dir)
    await checkExportTargets(dir, files, options)
    const written = new Set(files.map((f) => f.path))
    const dropped = droppedFiles(options.earlier, options.format, written)
    const listed = new Set(options.earlier?.exports.flatMap((e) => e.files.map((f) => f.path)) ?? [])
    const { stage, ready, old } = siblings(dir)
    const before = await listTree(dir).catch(() => null)
    const keptUnlisted: string[] = []
    try {
      await rm(stage, { recursive: true, force: true })
      await mkdir(stage, { recursive: true })
      for (const path of before ?? []) {
        if (written.has(path) || dropped.has(path)) continue
        if (!listed.has(path) && !options.ownFiles.includes(path)) keptUnlisted.push(path)
        await carry(join(dir, path), join(stage, path))
      }
      for (const file of files) {
        const target = exportTargetPath(stage, file)
        await mkdir(dirname(target), { recursive: true })
        await writeFile(target, file.content, { mode: file.executable ? 0o755 : 0o644, flag: 'wx' })
      }
    } catch (error) {
      await rm(stage, { recursive: true, force: true })
      throw ioError(`cannot write the export beside ${outDir}`, error)
    }
    // The swap: the complete set is marked ready, the folder moved aside, the set moved in, the old one removed.
    await rename(stage, ready)
    if (before !== null) await rename(dir, old)
    await rename(ready, dir)
    await rm(old, { recursive: true, force: true })
    return {
      written: files.map((f) => join(outDir, f.path)),
      keptUnlisted,
      removed: [...dropped].filter((path) => before?.includes(path)),
      recovered,
    }
  } finally {
    await unlock()
  }
}
