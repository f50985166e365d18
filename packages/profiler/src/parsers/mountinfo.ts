import { nonEmptyLines } from './values.js'

export interface MountEntry {
  /** "major:minor" of the device holding the filesystem. */
  device: string
  /** The path inside the filesystem that is mounted (`/` for a whole filesystem, deeper for bind mounts). */
  root: string
  mountPoint: string
  fsType: string
  source: string
  superOptions: string[]
}

/** Decodes the octal escapes the kernel uses for spaces and tabs in paths (`\040`). */
function unescapePath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))
}

/** Parses /proc/self/mountinfo (see proc(5)): fields, optional fields, "-", fs type, source, super options. */
export function parseMountinfo(text: string): MountEntry[] {
  return nonEmptyLines(text).flatMap((line) => {
    const [left, right] = line.split(' - ')
    if (!left || !right) return []
    const fields = left.split(' ')
    const [fsType, source, superOptions] = right.split(' ')
    if (fields.length < 5 || !fsType) return []
    return [
      {
        device: fields[2] as string,
        root: unescapePath(fields[3] as string),
        mountPoint: unescapePath(fields[4] as string),
        fsType,
        source: unescapePath(source ?? ''),
        superOptions: (superOptions ?? '').split(','),
      },
    ]
  })
}
