import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, join, normalize, relative } from 'node:path'
import { RigfitError } from '@rigfit/core'
import { assertReplaceable, existingKind, removeStaleTemporaries, temporaryPathFor } from '@rigfit/core/node'
import type { ExportFile } from './types.js'

/** Where a file of the export goes in a folder; refuses a path that would leave it. */
export function exportTargetPath(outDir: string, file: ExportFile): string {
  const target = join(outDir, file.path)
  const rel = relative(outDir, target)
  if (isAbsolute(file.path) || rel.startsWith('..') || normalize(file.path) !== rel) {
    throw new Error(`export file path escapes the output directory: ${file.path}`)
  }
  return target
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() === true
}

export function ioError(message: string, error: unknown): RigfitError {
  return new RigfitError(
    'io',
    'E_WRITE',
    `${message}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    {
      suggestion: 'Check that the output directory is writable and the disk has space.',
      cause: error,
    },
  )
}

/**
 * Refuses what an export may not write over: an --out that is not a folder, a directory, link or device where a
 * file goes, and (without `force`) an existing file other than rigfit's own.
 */
export async function checkExportTargets(
  outDir: string,
  files: ExportFile[],
  options: {
    force: boolean
    /** Paths rigfit keeps up to date itself (the manifest), replaced without force. */
    ownFiles?: string[]
  },
): Promise<Array<{ file: ExportFile; path: string }>> {
  const outKind = await existingKind(outDir)
  if (outKind !== 'none' && outKind !== 'dir' && !(outKind === 'link' && (await isDirectory(outDir)))) {
    throw new RigfitError(
      'exists',
      'E_NOT_DIR',
      `${outDir} is not a folder; --out names the folder to write into`,
      {
        suggestion: 'Choose a folder (it is created when missing).',
      },
    )
  }
  const targets = files.map((file) => ({ file, path: exportTargetPath(outDir, file) }))
  const clashes: string[] = []
  for (const { file, path } of targets) {
    const kind = await existingKind(path)
    if (kind === 'link' || kind === 'special') {
      // --force replaces regular files only: never follows a link into another file, never replaces a device.
      await assertReplaceable(path, true)
    }
    if (kind === 'dir') {
      throw new RigfitError(
        'exists',
        'E_EXISTS_DIR',
        `${path} is a directory, where the export writes a file`,
        {
          suggestion: 'Choose another --out directory.',
        },
      )
    }
    if (kind === 'file' && !options.force && !options.ownFiles?.includes(file.path)) clashes.push(path)
    await removeStaleTemporaries(path)
  }
  if (clashes.length > 0) {
    throw new RigfitError(
      'exists',
      'E_EXISTS',
      `refusing to overwrite ${clashes.length} existing file(s): ${clashes.join(', ')}`,
      {
        suggestion: 'Pass --force to overwrite them, or choose another --out directory.',
        details: clashes,
      },
    )
  }
  return targets
}

/**
 * Writes every file or none: refuses existing files unless `force`, writes each to a temp file beside its target,
 * and renames them into place only when all were written. Returns the written paths.
 */
export async function writeExportFiles(
  outDir: string,
  files: ExportFile[],
  options: {
    force: boolean
    /** Paths rigfit keeps up to date itself (the manifest), replaced without force. */
    ownFiles?: string[]
  },
): Promise<string[]> {
  const targets = await checkExportTargets(outDir, files, options)
  const temps: string[] = []
  // The folders this export created (the topmost of each mkdir): a failed write (ENOSPC, EIO) removes them again,
  // so nothing is left half-way, not even an empty --out folder.
  const createdDirs: string[] = []
  try {
    for (const { file, path } of targets) {
      const created = await mkdir(dirname(path), { recursive: true })
      if (created !== undefined) createdDirs.push(created)
      const temp = temporaryPathFor(path)
      temps.push(temp)
      await writeFile(temp, file.content, { mode: file.executable ? 0o755 : 0o644, flag: 'wx' })
    }
  } catch (error) {
    await Promise.all(temps.map((t) => rm(t, { force: true })))
    for (const dir of createdDirs.reverse()) await rm(dir, { recursive: true, force: true })
    throw ioError(`cannot write the export to ${outDir}`, error)
  }
  const written: string[] = []
  try {
    for (const [i, { path }] of targets.entries()) {
      await rename(temps[i] as string, path)
      written.push(path)
    }
  } catch (error) {
    await Promise.all(temps.slice(written.length).map((t) => rm(t, { force: true })))
    throw ioError(`renamed ${written.length} of ${targets.length} files into ${outDir}, then failed`, error)
  }
  return written
}
