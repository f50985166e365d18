import {
  describeJsonError,
  HARDWARE_PROFILE_SCHEMA_VERSION,
  HardwareProfile,
  RigfitError,
} from '@rigfit/core'
import {
  DEFAULT_INPUT_TIMEOUT_MS,
  MAX_INPUT_DOCUMENT_BYTES,
  readInputText,
  writeFileSafely,
} from '@rigfit/core/node'
import type { z } from 'zod'

/**
 * Loads a saved profile and validates it; a problem is a RigfitError that names the file and the field.
 * The answer's `source` is "file". A FIFO or pipe must deliver it within `timeoutMs`.
 */
export async function loadProfile(
  path: string,
  timeoutMs = DEFAULT_INPUT_TIMEOUT_MS,
): Promise<HardwareProfile> {
  return parseProfileText(await readProfileText(path, timeoutMs), path)
}

/**
 * A saved profile's text (either kind), read within the size bound; a FIFO or pipe must deliver it within
 * `timeoutMs`. An error names the file.
 */
export async function readProfileText(path: string, timeoutMs = DEFAULT_INPUT_TIMEOUT_MS): Promise<string> {
  const read = await readInputText(path, MAX_INPUT_DOCUMENT_BYTES, timeoutMs)
  if (!read.ok) {
    throw new RigfitError('io', 'E_PROFILE_READ', `Cannot read the profile ${path}: ${read.message}`, {
      suggestion: read.tooLarge
        ? `A profile is a few kilobytes; ${path} is not one. Save one with \`rigfit profile --out FILE\`.`
        : 'Save one first with `rigfit profile --out FILE` (a cluster: `rigfit profile --slurm --out FILE`), or check the path.',
    })
  }
  return read.text
}

/** A profile's JSON text parsed; an error says where it is not JSON, never quoting the file. */
export function parseProfileJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    // The parser quotes the text it choked on; the file may be anything (a link to a secret), so only say where.
    throw new RigfitError(
      'input',
      'E_PROFILE_JSON',
      `${path} is not valid JSON: ${describeJsonError(error)}`,
      {
        suggestion: 'Write the profile again with `rigfit profile --out FILE`.',
      },
    )
  }
}

/** Parses and validates a profile's JSON text; `path` names it in errors. Pure: the loader's checks, no I/O. */
export function parseProfileText(text: string, path: string): HardwareProfile {
  return profileFromJson(parseProfileJson(text, path), path)
}

/** Validates one machine's profile read from JSON; a cluster profile is refused with where it belongs. */
export function profileFromJson(json: unknown, path: string): HardwareProfile {
  if ((json as { kind?: unknown } | null)?.kind === 'cluster') {
    throw new RigfitError(
      'usage',
      'E_PROFILE_IS_CLUSTER',
      `${path} is a cluster profile (from \`rigfit profile --slurm\`), not one machine's profile.`,
      {
        suggestion:
          "plan, analyze, export and report take it with --from; elsewhere pass one node's profile (`rigfit profile --out node.json`).",
      },
    )
  }
  const version = (json as { schemaVersion?: unknown } | null)?.schemaVersion
  if (
    typeof json === 'object' &&
    json !== null &&
    version !== undefined &&
    version !== HARDWARE_PROFILE_SCHEMA_VERSION
  ) {
    throw new RigfitError(
      'validation',
      'E_PROFILE_VERSION',
      `${path}: schemaVersion ${String(version)} is not supported (this rigfit reads ${HARDWARE_PROFILE_SCHEMA_VERSION}).`,
      {
        suggestion: 'Profile the machine again with this version of rigfit.',
      },
    )
  }
  const parsed = validDocument(HardwareProfile, json, {
    code: 'E_PROFILE_INVALID',
    what: `${path} is not a valid hardware profile`,
    suggestion: 'Fix the field named above, or save a fresh profile with `rigfit profile --out FILE`.',
  })
  return { ...parsed, source: 'file' }
}

/**
 * The document `schema` reads from `json`, or a validation error naming the first fields that are wrong (their
 * JSON paths) with the suggestion; every issue is in its details.
 */
export function validDocument<T extends z.ZodType>(
  schema: T,
  json: unknown,
  error: { code: string; what: string; suggestion: string },
): z.infer<T> {
  const parsed = schema.safeParse(json)
  if (parsed.success) return parsed.data
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
  throw new RigfitError('validation', error.code, `${error.what}: ${issues.join('; ')}`, {
    suggestion: error.suggestion,
    details: parsed.error.issues,
  })
}

/**
 * Writes a profile as JSON atomically (see writeFileSafely): `force` replaces a regular file, never a link, a
 * device or a FIFO; without it an existing file is never replaced.
 */
export async function saveProfile(
  path: string,
  profile: HardwareProfile,
  options: { force?: boolean } = {},
): Promise<void> {
  await writeProfileJson(path, HardwareProfile.parse(profile), options.force ?? false)
}

/** Writes a validated profile document (a machine's or a cluster's) as indented JSON, atomically. */
export async function writeProfileJson(path: string, document: unknown, force: boolean): Promise<void> {
  const text = `${JSON.stringify(document, null, 2)}\n`
  try {
    await writeFileSafely(path, text, { force })
  } catch (error) {
    if (error instanceof RigfitError) throw error
    throw new RigfitError(
      'io',
      'E_WRITE',
      `Cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      {
        suggestion: 'Check that the directory exists and is writable.',
      },
    )
  }
}
