import { nonEmptyLines } from './values.js'

/**
 * Parses the `path:value` lines that `grep . /sys/class/power_supply/*\/*` (or `grep -r . DIR`) prints —
 * the usual way sysfs and cgroup trees are recorded in bug reports — into a map from path to value.
 * Multi-line files (uevent) are skipped where a line does not start with a path.
 */
export function parseGrepDump(text: string): Map<string, string> {
  const files = new Map<string, string>()
  for (const line of nonEmptyLines(text)) {
    const at = separatorAt(line)
    if (at > 0) files.set(line.slice(0, at), line.slice(at + 1).trim())
  }
  return files
}

/**
 * Directory names may hold colons (`ucsi-source-psy-USBC000:001`, `hid-0003:051D:0002.0004-battery`) and so
 * may values; attribute file names never do and are lower-case words (`online`, `memory.max`). The separator
 * is the first colon whose path ends in such a name.
 */
function separatorAt(line: string): number {
  if (!line.startsWith('/')) return -1
  for (let at = line.indexOf(':'); at >= 0; at = line.indexOf(':', at + 1)) {
    const segment = line.slice(line.lastIndexOf('/', at) + 1, at)
    if (/^[a-z][a-z0-9_.]*$/.test(segment)) return at
  }
  return -1
}
