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

/**
 * Loads a saved profile and validates it; a problem is a RigfitError that names the file and the field.
 * The answer's `source` is "file". A FIFO or pipe must deliver it within `timeoutMs`.
 */
export async function loadProfile(
  path: string,
  timeoutMs = DEFAULT_INPUT_TIMEOUT_MS,
): Promise<HardwareProfile> {
  const read = await readInputText(path, MAX_INPUT_DOCUMENT_BYTES, timeoutMs)
  if (!read.ok) {
    throw new RigfitError('io', 'E_PROFILE_READ', `Cannot read the profile ${path}: ${read.message}`, {
      suggestion: read.tooLarge
        ? `A profile is a few kilobytes; ${path} is not one. Save one with \`rigfit profile --out FILE\`.`
        : 'Save one first with `rigfit profile --out FILE`, or check the path.',
    })
  }
  return parseProfileText(read.text, path)
}

/** Parses and validates a profile's JSON text; `path` names it in errors. Pure: the loader's checks, no I/O. */
export function parseProfileText(text: string, path: string): HardwareProfile {
  let json: unknown
  try {
    json = JSON.parse(text)
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
  const parsed = HardwareProfile.safeParse(json)
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    throw new RigfitError(
      'validation',
      'E_PROFILE_INVALID',
      `${path} is not a valid hardware profile: ${issues.join('; ')}`,
      {
        suggestion: 'Fix the field named above, or save a fresh profile with `rigfit profile --out FILE`.',
        details: parsed.error.issues,
      },
    )
  }
  return { ...parsed.data, source: 'file' }
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
  const text = `${JSON.stringify(HardwareProfile.parse(profile), null, 2)}\n`
  try {
    await writeFileSafely(path, text, { force: options.force ?? false })
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
