import { access, constants } from 'node:fs/promises'
import { delimiter, isAbsolute, join } from 'node:path'

/**
 * The full path of an executable found on PATH, or null. Checking first lets the profile say "not installed"
 * without spawning anything, which keeps a GPU-less machine fast.
 */
export async function findExecutable(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | null> {
  if (isAbsolute(name)) return (await isExecutable(name)) ? name : null
  const dirs = (env.PATH ?? env.Path ?? '').split(delimiter).filter(Boolean)
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : ['']
  for (const dir of dirs) {
    for (const ext of extensions) {
      const candidate = join(dir, name + ext)
      if (await isExecutable(candidate)) return candidate
    }
  }
  return null
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, process.platform === 'win32' ? constants.F_OK : constants.X_OK)
    return true
  } catch {
    return false
  }
}
