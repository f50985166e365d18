import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A local HTTP server that answers as the Hugging Face Hub's file endpoint does:
 * `GET /{org}/{name}/resolve/{revision}/{file}` redirects (302) to a CDN path on a second server with the file's
 * ETag and the commit in X-Repo-Commit; a gated repository answers 401 (no token) or 403 (a wrong one) with
 * X-Error-Code GatedRepo; a missing repository, revision or file answers 404 with RepositoryNotFound,
 * RevisionNotFound or EntryNotFound. A few repositories misbehave on purpose: slow, huge, looping, HTML.
 */

export interface FakeRepo {
  /** File name to content, served at every revision the repository has. */
  files: Record<string, string>
  /** The commit `main` points at (40 hex digits). */
  commit: string
  /** Other branches and tags, to their commits. */
  refs?: Record<string, string>
  /** The token that opens a gated repository. */
  token?: string
}

export interface SeenRequest {
  server: 'hub' | 'cdn'
  path: string
  authorization: string | undefined
}

export interface FakeHub {
  url: string
  requests: SeenRequest[]
  close: () => Promise<void>
}

/** Repositories that misbehave: each answers config.json in its own broken way. */
export const MISBEHAVING = {
  slow: 'slow/model',
  huge: 'huge/model',
  hugeStated: 'huge/stated',
  loop: 'loop/model',
  html: 'html/model',
  noCommit: 'mirror/no-commit',
} as const

export function commitOf(text: string): string {
  return createHash('sha1').update(text).digest('hex')
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  )
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body = ''): void {
  res.writeHead(status, headers)
  res.end(body)
}

function misbehave(repo: string, req: IncomingMessage, res: ServerResponse, commit: string): boolean {
  switch (repo) {
    case MISBEHAVING.slow: {
      // Headers only after 30 s: the client's --timeout must end the wait.
      const timer = setTimeout(() => send(res, 200, {}, '{}'), 30_000)
      req.on('close', () => clearTimeout(timer))
      return true
    }
    case MISBEHAVING.huge: {
      // No Content-Length: chunks until the client stops reading (64 MiB at most).
      res.writeHead(200, { 'content-type': 'application/json', 'x-repo-commit': commit })
      const chunk = Buffer.alloc(1024 * 1024, 0x20)
      let sent = 0
      const pump = () => {
        while (sent < 64 && !res.destroyed) {
          sent++
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        res.end()
      }
      res.on('error', () => undefined)
      pump()
      return true
    }
    case MISBEHAVING.hugeStated:
      res.writeHead(200, { 'content-length': String(2 ** 30), 'x-repo-commit': commit })
      res.write('{')
      req.on('close', () => res.destroy())
      return true
    case MISBEHAVING.loop:
      send(res, 302, { location: `/${repo}/resolve/main/config.json?hop=1`, 'x-repo-commit': commit })
      return true
    case MISBEHAVING.html:
      send(res, 200, { 'content-type': 'text/html', 'x-repo-commit': commit }, '<html>Sign in</html>')
      return true
    default:
      return false
  }
}

/** Starts the Hub and its CDN on two random ports of 127.0.0.1 (two origins, as the real Hub and CDN are). */
export async function startFakeHub(repos: Record<string, FakeRepo>): Promise<FakeHub> {
  const requests: SeenRequest[] = []
  const blobs = new Map<string, string>()
  const cdn = createServer((req, res) => {
    requests.push({ server: 'cdn', path: req.url ?? '', authorization: req.headers.authorization })
    const body = blobs.get((req.url ?? '').slice('/blobs/'.length))
    if (body === undefined) return send(res, 404, {})
    send(
      res,
      200,
      { 'content-type': 'application/octet-stream', 'content-length': String(Buffer.byteLength(body)) },
      body,
    )
  })
  const cdnUrl = await listen(cdn)
  const hub = createServer((req, res) => {
    const url = req.url ?? ''
    requests.push({ server: 'hub', path: url, authorization: req.headers.authorization })
    if (url.includes('?hop=1')) return send(res, 302, { location: url.replace('?hop=1', '') })
    const match = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/([^?]+)$/.exec(url)
    if (!match) return send(res, 404, {})
    const [, repo = '', encodedRevision = '', file = ''] = match
    const revision = decodeURIComponent(encodedRevision)
    if (misbehave(repo, req, res, commitOf(repo))) return
    if (repo === MISBEHAVING.noCommit) return send(res, 200, {}, repos[repo]?.files[file] ?? '')
    const entry = repos[repo]
    if (!entry) return send(res, 404, { 'x-error-code': 'RepositoryNotFound' }, 'Repository not found')
    if (entry.token !== undefined && req.headers.authorization !== `Bearer ${entry.token}`) {
      const status = req.headers.authorization === undefined ? 401 : 403
      return send(res, status, { 'x-error-code': 'GatedRepo' }, 'Access to this model is restricted')
    }
    const commits = { main: entry.commit, ...entry.refs }
    const commit = Object.hasOwn(commits, revision)
      ? commits[revision as keyof typeof commits]
      : Object.values(commits).includes(revision)
        ? revision
        : undefined
    if (commit === undefined) return send(res, 404, { 'x-error-code': 'RevisionNotFound' })
    const body = entry.files[file]
    if (body === undefined) return send(res, 404, { 'x-error-code': 'EntryNotFound' })
    const etag = createHash('sha256').update(body).digest('hex')
    blobs.set(etag, body)
    send(res, 302, {
      location: `${cdnUrl}/blobs/${etag}`,
      etag: `"${etag}"`,
      'x-repo-commit': commit,
    })
  })
  const url = await listen(hub)
  const close = (server: Server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { url, requests, close: async () => void (await Promise.all([close(hub), close(cdn)])) }
}

/** A home of its own for one run: HF_HOME and rigfit's cache (XDG_CACHE_HOME) empty, no token, online. */
export interface IsolatedHome {
  root: string
  hfHome: string
  /** rigfit's own cache of Hub configs: oclif's cache folder under XDG_CACHE_HOME. */
  rigfitHub: string
  env: NodeJS.ProcessEnv
}

export function isolatedHome(endpoint: string, extra: NodeJS.ProcessEnv = {}): IsolatedHome {
  const root = mkdtempSync(join(tmpdir(), 'rigfit-hub-'))
  const hfHome = join(root, 'hf')
  const env = {
    HF_ENDPOINT: endpoint,
    HF_HOME: hfHome,
    XDG_CACHE_HOME: join(root, 'cache'),
    HF_HUB_CACHE: '',
    HUGGINGFACE_HUB_CACHE: '',
    HF_TOKEN: '',
    HUGGING_FACE_HUB_TOKEN: '',
    HF_TOKEN_PATH: '',
    HF_HUB_OFFLINE: '',
    ...extra,
  }
  return { root, hfHome, rigfitHub: join(root, 'cache', 'rigfit', 'hub'), env }
}

/** Every regular file under a folder, with its text: to prove a secret was written nowhere. */
export function filesUnder(dir: string): { path: string; text: string }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => ({ path, text: readFileSync(path, 'latin1') }))
}
