import { randomBytes } from 'node:crypto'
import { link, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { HARDWARE_PROFILE_SCHEMA_VERSION, HardwareProfile, RigfitError } from '@rigfit/core'

/**
 * Loads a saved profile and validates it; a problem is a RigfitError that names the file and the field.
 * The answer's `source` is "file".
 */
export async function loadProfile(path: string): Promise<HardwareProfile> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new RigfitError(
      'io',
      'E_PROFILE_READ',
      `Cannot read the profile ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      {
        suggestion: 'Save one first with `rigfit profile --out FILE`, or check the path.',
      },
    )
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new RigfitError(
      'input',
      'E_PROFILE_JSON',
      `${path} is not valid JSON: ${(error as Error).message}`,
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
 * Writes a profile as JSON atomically: to a temporary file beside the target, then moved into place. Without
 * `force` an existing file is never replaced (the move is a hard link, which fails if the name exists).
 */
export async function saveProfile(
  path: string,
  profile: HardwareProfile,
  options: { force?: boolean } = {},
): Promise<void> {
  const temporary = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  )
  try {
    await writeFile(temporary, `${JSON.stringify(HardwareProfile.parse(profile), null, 2)}\n`, { flag: 'wx' })
    if (options.force) {
      await rename(temporary, path)
      return
    }
    try {
      await link(temporary, path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new RigfitError('exists', 'E_EXISTS', `${path} already exists; it was left as it is.`, {
          suggestion: 'Pass --force to replace it, or choose another file name.',
        })
      }
      throw error
    }
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
  } finally {
    await rm(temporary, { force: true })
  }
}
