import { readdirSync, statSync } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { hubCacheFolderName, isCommitHash, repoOfHubCacheFolder } from '@rigfit/core'
import { readTextFile, temporaryPathFor } from '@rigfit/core/node'

/**
 * Both caches rigfit reads share huggingface_hub's layout: `models--org--name/refs/<revision>` holds a commit
 * id, and `models--org--name/snapshots/<commit>/` the files at that commit. rigfit reads the Hugging Face cache
 * (what the user downloaded) and keeps its own, of the configs it fetched, in the same layout; it never writes
 * the Hugging Face cache.
 */

export interface CachedSnapshot {
  dir: string
  commit: string
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** The commit a ref file names, or null: the file is small and holds one commit id, else it is not trusted. */
function readRef(path: string): string | null {
  const read = readTextFile(path, 1024)
  if (!read.ok) return null
  const commit = read.text.trim()
  return isCommitHash(commit) ? commit : null
}

/** The snapshot of `repo` at `revision` (a branch, tag or commit) holding a config.json, or null. */
export function findSnapshot(root: string, repo: string, revision: string): CachedSnapshot | null {
  const repoDir = join(root, hubCacheFolderName(repo))
  const commit = isCommitHash(revision) ? revision : readRef(join(repoDir, 'refs', revision))
  if (commit === null) return null
  const dir = join(repoDir, 'snapshots', commit)
  return isFile(join(dir, 'config.json')) ? { dir, commit } : null
}

/** The repositories a cache holds, as `org/name`. */
export function cachedRepos(root: string): string[] {
  try {
    return readdirSync(root)
      .map(repoOfHubCacheFolder)
      .filter((repo): repo is string => repo !== null)
  } catch {
    return []
  }
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const temporary = temporaryPathFor(path)
  try {
    await writeFile(temporary, text, { flag: 'wx', mode: 0o644 })
    await rename(temporary, path)
  } finally {
    await rm(temporary, { force: true })
  }
}

/**
 * Keeps fetched files under `snapshots/<commit>/` and points `refs/<revision>` at the commit, the snapshot first so
 * a ref never names a missing one. Only what the Hub served is written (never a header or a token). Returns the
 * snapshot folder.
 */
export async function saveSnapshot(
  root: string,
  repo: string,
  revision: string,
  commit: string,
  files: Readonly<Record<string, string>>,
): Promise<string> {
  const repoDir = join(root, hubCacheFolderName(repo))
  const dir = join(repoDir, 'snapshots', commit)
  for (const [name, text] of Object.entries(files)) await writeAtomically(join(dir, name), text)
  if (!isCommitHash(revision)) await writeAtomically(join(repoDir, 'refs', revision), commit)
  return dir
}
