import { homedir } from 'node:os'
import { join } from 'node:path'
import { RigfitError } from '@rigfit/core'
import { readTextFile } from '@rigfit/core/node'

/**
 * The Hugging Face Hub settings, read from the environment as huggingface_hub reads them: HF_ENDPOINT for a
 * mirror, HF_TOKEN (or the token file `huggingface-cli login` writes), HF_HOME / HF_HUB_CACHE for the cache,
 * HF_HUB_OFFLINE to stay off the network.
 */
export interface HubEnv {
  /** The endpoint's origin and path, with no credentials (HF_ENDPOINT without user:password@). */
  endpoint: string
  /** Sent to the endpoint's own origin only; never printed, logged or written. */
  token: string | null
  hubCache: string
  offline: boolean
}

const DEFAULT_ENDPOINT = 'https://huggingface.co'
/** A token is a line of ASCII; a token file is tiny. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024

// huggingface_hub's truthy spellings (constants._is_true).
const TRUE = new Set(['1', 'on', 'yes', 'true'])

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed ? trimmed : undefined
}

export function hfHome(env: NodeJS.ProcessEnv): string {
  const xdg = nonEmpty(env.XDG_CACHE_HOME)
  return nonEmpty(env.HF_HOME) ?? join(xdg ?? join(homedir(), '.cache'), 'huggingface')
}

function endpointOf(env: NodeJS.ProcessEnv): string {
  const text = nonEmpty(env.HF_ENDPOINT) ?? DEFAULT_ENDPOINT
  let url: URL
  try {
    url = new URL(text)
  } catch {
    url = new URL('invalid:')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new RigfitError('usage', 'E_HUB_ENDPOINT', 'HF_ENDPOINT is not an http(s) URL', {
      suggestion: `Set HF_ENDPOINT to the Hub or a mirror, such as ${DEFAULT_ENDPOINT}, or unset it.`,
    })
  }
  url.username = ''
  url.password = ''
  url.search = ''
  url.hash = ''
  return url.toString().replace(/\/+$/, '')
}

/** The token: HF_TOKEN, then the legacy HUGGING_FACE_HUB_TOKEN, then the file at HF_TOKEN_PATH or $HF_HOME/token. */
function tokenOf(env: NodeJS.ProcessEnv, home: string): string | null {
  let token = nonEmpty(env.HF_TOKEN) ?? nonEmpty(env.HUGGING_FACE_HUB_TOKEN)
  let where = 'HF_TOKEN'
  if (token === undefined) {
    where = nonEmpty(env.HF_TOKEN_PATH) ?? join(home, 'token')
    const read = readTextFile(where, MAX_TOKEN_FILE_BYTES)
    token = read.ok ? nonEmpty(read.text) : undefined
  }
  if (token === undefined) return null
  // A header carries printable ASCII only; the token itself is never repeated in the message.
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new RigfitError(
      'usage',
      'E_HUB_TOKEN',
      `the Hugging Face token in ${where} holds characters a token cannot have`,
      {
        suggestion:
          'Copy the token again from https://huggingface.co/settings/tokens, or run `huggingface-cli login`.',
      },
    )
  }
  return token
}

export function readHubEnv(env: NodeJS.ProcessEnv = process.env): HubEnv {
  const home = hfHome(env)
  return {
    endpoint: endpointOf(env),
    token: tokenOf(env, home),
    hubCache: nonEmpty(env.HF_HUB_CACHE) ?? nonEmpty(env.HUGGINGFACE_HUB_CACHE) ?? join(home, 'hub'),
    offline: TRUE.has((env.HF_HUB_OFFLINE ?? '').trim().toLowerCase()),
  }
}
