import { RigfitError } from '@rigfit/core'
import type { HubEnv } from './hub-env.js'
import type { HubRequest, HubRequestError } from './hub-http.js'

interface FailedRequest extends HubRequest {
  /** Repository ids close to `repo` (catalog and cache), for a 404. */
  closeMatches: () => string[]
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`

/**
 * The RigfitError for a failed Hub request, one code per kind: a name that does not exist is the user's input (3);
 * access, network, time and response problems are I/O (7). Messages name the repository, file and endpoint, never
 * the token.
 */
export function errorOfRequest(
  env: HubEnv,
  error: HubRequestError,
  closeMatches: () => string[],
): RigfitError {
  const req: FailedRequest = { ...error.request, closeMatches }
  const failure = error.failure
  const what = `${req.file} of ${req.repo}@${req.revision}`
  const details = { repo: req.repo, revision: req.revision, file: req.file, endpoint: env.endpoint }
  switch (failure.kind) {
    case 'timeout':
      return new RigfitError(
        'io',
        'E_HUB_TIMEOUT',
        `${env.endpoint} sent no complete ${what} within ${seconds(req.timeoutMs)}`,
        {
          suggestion: `Wait longer with --timeout ${Math.max(30, Math.ceil((req.timeoutMs / 1000) * 3))} (seconds), check the network, or set HF_HUB_OFFLINE=1 to use only what is cached.`,
          details,
        },
      )
    case 'too-large':
      return new RigfitError(
        'io',
        'E_HUB_TOO_LARGE',
        `${env.endpoint} sent ${failure.bytes} bytes or more for ${what}; rigfit reads at most ${req.maxBytes}`,
        {
          suggestion:
            'This is not the file the Hub serves: check HF_ENDPOINT (a mirror or proxy may answer with something else).',
          details,
        },
      )
    case 'redirect-loop':
      return new RigfitError(
        'io',
        'E_HUB_REDIRECT_LOOP',
        `${env.endpoint} redirected ${what} in a loop (${failure.hops} hops)`,
        {
          suggestion:
            'Check HF_ENDPOINT and any proxy between you and the Hub; the Hub itself redirects once or twice.',
          details,
        },
      )
    case 'unreachable':
      return new RigfitError(
        'io',
        'E_HUB_UNREACHABLE',
        `cannot reach ${env.endpoint} for ${what} (${failure.reason})`,
        {
          suggestion:
            'Check the network and HF_ENDPOINT; with HF_HUB_OFFLINE=1 rigfit uses only the models already in the Hugging Face cache.',
          details,
        },
      )
    case 'status':
      return statusError(env, req, failure.status, failure.errorCode, what, details)
  }
}

function statusError(
  env: HubEnv,
  req: FailedRequest,
  status: number,
  errorCode: string | null,
  what: string,
  details: Record<string, string>,
): RigfitError {
  // The Hub answers 401 for a repository that does not exist as well as for a private one; X-Error-Code tells.
  const missingRepo = status === 404 || errorCode === 'RepositoryNotFound'
  if ((status === 401 || status === 403) && errorCode !== 'RepositoryNotFound') {
    const page = `${env.endpoint}/${req.repo}`
    const tokenLine =
      env.token === null
        ? 'no token was sent: create a read token at https://huggingface.co/settings/tokens and set HF_TOKEN (or run `huggingface-cli login`)'
        : 'the token sent has no access yet: a licence request may still be pending, or the token lacks read access to gated repositories'
    return new RigfitError(
      'io',
      'E_HUB_GATED',
      `${req.repo} is gated or private: ${env.endpoint} answered ${status} for ${req.file}`,
      {
        suggestion: `Open ${page}, sign in and accept the licence; ${tokenLine}.`,
        details: { ...details, status },
      },
    )
  }
  if (errorCode === 'RevisionNotFound') {
    return new RigfitError(
      'input',
      'E_HUB_REVISION_NOT_FOUND',
      `${req.repo} has no revision "${req.revision}"`,
      {
        suggestion: `Name an existing branch, tag or commit: --model ${req.repo}@main, or drop the @ for the default branch.`,
        details: { ...details, status },
      },
    )
  }
  if (status === 404 && errorCode === 'EntryNotFound') {
    return new RigfitError('input', 'E_HUB_NO_CONFIG', `${req.repo}@${req.revision} has no ${req.file}`, {
      suggestion:
        'rigfit prices transformers models, which carry a config.json; for another layout pass a config.json with --model ./config.json.',
      details: { ...details, status },
    })
  }
  if (missingRepo) {
    const near = req.closeMatches()
    return new RigfitError(
      'input',
      'E_HUB_NOT_FOUND',
      `${req.repo} was not found on ${env.endpoint} (${status})`,
      {
        suggestion:
          (near.length > 0 ? `Did you mean ${near.join(', ')}? ` : '') +
          'Check the spelling as the Hub shows it (org/name, case included); `rigfit estimate --list-models` lists the catalog.',
        details: { ...details, status, closeMatches: near },
      },
    )
  }
  return new RigfitError('io', 'E_HUB_HTTP', `${env.endpoint} answered ${status} for ${what}`, {
    suggestion: 'Try again later; with HF_HUB_OFFLINE=1 rigfit uses only the models already cached.',
    details: { ...details, status },
  })
}
