import { RigfitError } from '../errors.js'

/** A model named as the Hugging Face Hub names it: `org/name`, optionally `@revision` (branch, tag or commit). */
export interface HubModelRef {
  repo: string
  /** The revision asked for; `main` when none was given. */
  revision: string
  /** Whether the user named the revision (then the catalog, which holds `main`'s numbers, is not used). */
  pinned: boolean
}

export const DEFAULT_HUB_REVISION = 'main'

// The Hub's own rule for repository ids (huggingface_hub's validate_repo_id): word characters, '-', '.', at most
// 96 each side of the '/', no '--' or '..'.
const PART = /^[A-Za-z0-9_][\w.-]{0,95}$/
// Branch and tag names may hold '/' (refs/pr/1); they become a URL segment and a cache path, so nothing else.
const REVISION = /^[\w.-]+(\/[\w.-]+)*$/

/** A 40-hex-digit commit id: a revision that can never move. */
export function isCommitHash(revision: string): boolean {
  return /^[0-9a-f]{40}$/.test(revision)
}

/**
 * `org/name[@revision]` as a Hub reference, or null when the text does not have that shape (a catalog id, a
 * path). A text with the shape but a bad revision is a usage error naming it.
 */
export function parseHubModelRef(text: string): HubModelRef | null {
  const trimmed = text.trim()
  const at = trimmed.indexOf('@')
  const repo = at === -1 ? trimmed : trimmed.slice(0, at)
  const parts = repo.split('/')
  if (parts.length !== 2 || !parts.every((p) => PART.test(p) && !p.includes('--') && !p.includes('..')))
    return null
  if (parts.some((p) => p.endsWith('.json'))) return null
  if (at === -1) return { repo, revision: DEFAULT_HUB_REVISION, pinned: false }
  const revision = trimmed.slice(at + 1)
  if (!REVISION.test(revision) || revision.split('/').some((p) => p === '.' || p === '..')) {
    throw new RigfitError('usage', 'E_HUB_REVISION', `"${revision}" is not a revision of ${repo}`, {
      suggestion: `Name a branch, tag or commit after the @: --model ${repo}@main, or drop the @ for the default branch.`,
      details: { repo, revision },
    })
  }
  return { repo, revision, pinned: true }
}

/** The cache folder name huggingface_hub gives a model repository: `models--org--name`. */
export function hubCacheFolderName(repo: string): string {
  return `models--${repo.split('/').join('--')}`
}

/** The repository a `models--org--name` cache folder holds, or null for other folders. */
export function repoOfHubCacheFolder(folder: string): string | null {
  const match = /^models--([^-][\w.-]*?)--([\w.][\w.-]*)$/.exec(folder)
  return match ? `${match[1]}/${match[2]}` : null
}
