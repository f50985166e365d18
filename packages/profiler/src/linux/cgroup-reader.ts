import { join } from 'node:path'
import { type CgroupLimits, cgroupLimitsFromFiles, parseProcCgroup } from '../parsers/cgroup.js'
import { parseMountinfo } from '../parsers/mountinfo.js'
import { readText } from '../system/read.js'

/** The directories from a cgroup up to the root of its mount, leaf first: limits of parents apply too. */
function hierarchy(mountPoint: string, mountRoot: string, cgroupPath: string): string[] {
  const relative =
    mountRoot !== '/' && cgroupPath.startsWith(mountRoot) ? cgroupPath.slice(mountRoot.length) : cgroupPath
  const parts = relative.split('/').filter(Boolean)
  const dirs: string[] = []
  for (let depth = parts.length; depth >= 0; depth -= 1) dirs.push(join(mountPoint, ...parts.slice(0, depth)))
  return dirs
}

async function readLevels(dirs: string[], file: string): Promise<string | undefined> {
  const values = (await Promise.all(dirs.map((dir) => readText(join(dir, file))))).filter(
    (text): text is string => text !== null,
  )
  return values.length > 0 ? values.map((text) => text.trim()).join('\n') : undefined
}

/**
 * The memory and CPU limits of this process's cgroup, v2 where its controllers are enabled, else v1 (hybrid
 * hosts mount both). Reads /proc/self/cgroup and /proc/self/mountinfo to find the right directories.
 */
export async function readCgroupLimits(procCgroup: string, mountinfo: string): Promise<CgroupLimits> {
  const memberships = parseProcCgroup(procCgroup)
  const mounts = parseMountinfo(mountinfo)
  const unified = memberships.find((entry) => entry.hierarchy === '0')
  const v2Mount = mounts.find((mount) => mount.fsType === 'cgroup2')
  if (unified && v2Mount) {
    const dirs = hierarchy(v2Mount.mountPoint, v2Mount.root, unified.path)
    const controllers = (await readText(join(v2Mount.mountPoint, 'cgroup.controllers'))) ?? ''
    if (/\bmemory\b|\bcpu\b/.test(controllers)) {
      return cgroupLimitsFromFiles({
        'memory.max': (await readLevels(dirs, 'memory.max')) ?? '',
        'cpu.max': (await readLevels(dirs, 'cpu.max')) ?? '',
      })
    }
  }
  const v1Dirs = (controller: string): string[] => {
    const membership = memberships.find((entry) => entry.controllers.includes(controller))
    const mount = mounts.find((entry) => entry.fsType === 'cgroup' && entry.superOptions.includes(controller))
    return membership && mount ? hierarchy(mount.mountPoint, mount.root, membership.path) : []
  }
  const memoryDirs = v1Dirs('memory')
  const cpuDirs = v1Dirs('cpu')
  if (memoryDirs.length === 0 && cpuDirs.length === 0)
    return { version: null, memoryLimitBytes: null, cpuQuotaCores: null }
  return cgroupLimitsFromFiles({
    'memory.limit_in_bytes': (await readLevels(memoryDirs, 'memory.limit_in_bytes')) ?? '',
    'cpu.cfs_quota_us': await readLevels(cpuDirs, 'cpu.cfs_quota_us'),
    'cpu.cfs_period_us': await readLevels(cpuDirs, 'cpu.cfs_period_us'),
  })
}
