import { RIGFIT_VERSION } from '@rigfit/core'
import type { HubEnv } from './hub-env.js'

/** One file of a repository as the Hub's resolve endpoint served it. */
export interface HubFile {
  text: string
  /** The commit the file was served at (X-Repo-Commit), when the endpoint said. */
  commit: string | null
}

export interface HubRequest {
  repo: string
  revision: string
  file: string
  timeoutMs: number
  /** Refused above this many bytes, whatever the response claims. */
  maxBytes: number
}

/** Why a request failed, as the caller reports it: each maps to one error code. */
export type HubFailure =
  | { kind: 'status'; status: number; errorCode: string | null }
  | { kind: 'timeout' }
  | { kind: 'too-large'; bytes: number }
  | { kind: 'redirect-loop'; hops: number }
  | { kind: 'unreachable'; reason: string }

/** A failed request: what was asked, and why it failed. Holds no header, so no token. */
export class HubRequestError extends Error {
  constructor(
    readonly request: HubRequest,
    readonly failure: HubFailure,
  ) {
    super(`${request.repo}/${request.file}: ${failure.kind}`)
  }
}

/** More hops than any Hub answer takes (a renamed repository, then the CDN). */
const MAX_REDIRECTS = 10

/** `{endpoint}/{repo}/resolve/{revision}/{file}`, the revision one URL segment as huggingface_hub quotes it. */
export function resolveUrl(env: HubEnv, repo: string, revision: string, file: string): string {
  return `${env.endpoint}/${repo}/resolve/${encodeURIComponent(revision)}/${file}`
}

/** Reads the body up to `maxBytes`; a stated or actual length above it stops the read. */
async function readLimited(response: Response, request: HubRequest): Promise<string> {
  const maxBytes = request.maxBytes
  const stated = Number(response.headers.get('content-length') ?? Number.NaN)
  if (stated > maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    throw new HubRequestError(request, { kind: 'too-large', bytes: stated })
  }
  const reader = response.body?.getReader()
  if (!reader) return ''
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined)
      throw new HubRequestError(request, { kind: 'too-large', bytes: total })
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')
}

/** The network reason of a failed fetch (ECONNREFUSED, ENOTFOUND, ...), never the URL or the headers. */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause
  return typeof cause?.code === 'string' ? cause.code : 'network error'
}

/**
 * GETs one file through the resolve endpoint, following redirects by hand: the token goes to the endpoint's own
 * origin only (a CDN never sees it), a URL seen twice or more than ten hops is a loop, and the whole exchange,
 * body included, has `timeoutMs`. Throws HubRequestError; nothing it throws carries the token.
 */
export async function fetchHubFile(env: HubEnv, request: HubRequest): Promise<HubFile> {
  const origin = new URL(env.endpoint).origin
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), request.timeoutMs)
  const seen = new Set<string>()
  let url = resolveUrl(env, request.repo, request.revision, request.file)
  let commit: string | null = null
  try {
    for (let hop = 0; ; hop++) {
      if (seen.has(url) || hop > MAX_REDIRECTS)
        throw new HubRequestError(request, { kind: 'redirect-loop', hops: hop })
      seen.add(url)
      const headers: Record<string, string> = { 'user-agent': `rigfit/${RIGFIT_VERSION}` }
      if (env.token !== null && new URL(url).origin === origin) headers.authorization = `Bearer ${env.token}`
      let response: Response
      try {
        response = await fetch(url, { headers, redirect: 'manual', signal: controller.signal })
      } catch (error) {
        if (isAbort(error)) throw new HubRequestError(request, { kind: 'timeout' })
        throw new HubRequestError(request, { kind: 'unreachable', reason: reasonOf(error) })
      }
      commit ??= response.headers.get('x-repo-commit')
      const location = response.headers.get('location')
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel().catch(() => undefined)
        url = new URL(location, url).toString()
        continue
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined)
        throw new HubRequestError(request, {
          kind: 'status',
          status: response.status,
          errorCode: response.headers.get('x-error-code'),
        })
      }
      try {
        const text = await readLimited(response, request)
        return { text, commit: commit !== null && /^[0-9a-f]{40}$/.test(commit) ? commit : null }
      } catch (error) {
        if (isAbort(error)) throw new HubRequestError(request, { kind: 'timeout' })
        throw error
      }
    }
  } finally {
    clearTimeout(timer)
  }
}
