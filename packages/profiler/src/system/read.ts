import { readdir, readFile, readlink } from 'node:fs/promises'

/** A file's text, or null when it is missing or unreadable (sysfs files vanish with hotplug; that is normal). */
export async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8')
  } catch {
    return null
  }
}

/** A one-value sysfs/proc file, trimmed; null when absent or empty. */
export async function readValue(path: string): Promise<string | null> {
  const text = await readText(path)
  const value = text?.trim()
  return value ? value : null
}

export async function listDir(path: string): Promise<string[]> {
  try {
    return (await readdir(path)).sort()
  } catch {
    return []
  }
}

export async function readLink(path: string): Promise<string | null> {
  try {
    return await readlink(path)
  } catch {
    return null
  }
}
