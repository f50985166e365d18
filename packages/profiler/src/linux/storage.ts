import { statfs } from 'node:fs/promises'
import type { StorageKind } from '@rigfit/core'
import { type MountEntry, parseMountinfo } from '../parsers/mountinfo.js'
import { classifyBlockDevice, resolveBlockDevice } from './block-device.js'

export interface MountFacts {
  mount: string
  device: string
  majorMinor: string
  fsType: string
  kind: StorageKind
  kindReason: string
  totalBytes: number
  freeBytes: number
}

/** Filesystems that hold no user data (or hold it in RAM). */
const PSEUDO_FS = new Set([
  'proc',
  'sysfs',
  'devtmpfs',
  'devpts',
  'tmpfs',
  'ramfs',
  'cgroup',
  'cgroup2',
  'securityfs',
  'debugfs',
  'tracefs',
  'pstore',
  'bpf',
  'mqueue',
  'hugetlbfs',
  'configfs',
  'fusectl',
  'autofs',
  'binfmt_misc',
  'squashfs',
  'efivarfs',
  'rpc_pipefs',
  'nsfs',
  'selinuxfs',
  'fuse.gvfsd-fuse',
  'fuse.portal',
  'fuse.lxcfs',
  'iso9660',
  'devfs',
  'overlay.lower',
])
const SYSTEM_PREFIXES = [
  '/proc',
  '/sys',
  '/dev',
  '/run',
  '/boot',
  '/snap',
  '/var/lib/docker',
  '/var/lib/containers',
  '/mnt/sandboxing',
]

/**
 * The mounts a dataset or checkpoint could go to: one per filesystem (bind mounts and files mounted by container
 * runtimes folded into the shortest path), pseudo and system filesystems left out.
 */
export function dataMounts(entries: MountEntry[]): MountEntry[] {
  const byDevice = new Map<string, MountEntry>()
  for (const entry of entries) {
    if (PSEUDO_FS.has(entry.fsType)) continue
    const isSystem = SYSTEM_PREFIXES.some(
      (prefix) => entry.mountPoint === prefix || entry.mountPoint.startsWith(`${prefix}/`),
    )
    if (isSystem && !entry.mountPoint.startsWith('/run/media/')) continue
    const key = `${entry.device}:${entry.fsType}`
    const kept = byDevice.get(key)
    const better =
      !kept ||
      (entry.root === '/' && kept.root !== '/') ||
      (entry.root === kept.root && entry.mountPoint.length < kept.mountPoint.length)
    if (better) byDevice.set(key, entry)
  }
  return [...byDevice.values()].sort((a, b) => a.mountPoint.localeCompare(b.mountPoint))
}

const NETWORK_FS = /^(nfs4?|cifs|smb3|9p|virtiofs|fuse\.sshfs|ceph|glusterfs|lustre|beegfs|gpfs)$/

/** Kind, size and free space of every data mount, from /proc/self/mountinfo, statfs and sysfs. */
export async function readMounts(mountinfoText: string, sysRoot = '/sys'): Promise<MountFacts[]> {
  const mounts = dataMounts(parseMountinfo(mountinfoText))
  const facts = await Promise.all(
    mounts.map(async (entry): Promise<MountFacts | null> => {
      let total = 0
      let free = 0
      try {
        const stats = await statfs(entry.mountPoint)
        total = stats.blocks * stats.bsize
        free = stats.bavail * stats.bsize
      } catch {
        return null
      }
      if (total === 0) return null
      const { kind, reason } = await mountKind(entry, sysRoot)
      return {
        mount: entry.mountPoint,
        device: entry.source,
        majorMinor: entry.device,
        fsType: entry.fsType,
        kind,
        kindReason: reason,
        totalBytes: total,
        freeBytes: free,
      }
    }),
  )
  return facts.filter((fact): fact is MountFacts => fact !== null)
}

async function mountKind(entry: MountEntry, sysRoot: string): Promise<{ kind: StorageKind; reason: string }> {
  if (NETWORK_FS.test(entry.fsType))
    return { kind: 'unknown', reason: `network or shared filesystem (${entry.fsType})` }
  if (entry.fsType === 'overlay')
    return { kind: 'unknown', reason: 'container overlay: the disk behind it is not visible' }
  const device = await resolveBlockDevice(entry.device, sysRoot)
  if (!device) return { kind: 'unknown', reason: 'no block device behind this filesystem' }
  const { kind, reason } = classifyBlockDevice(device)
  return { kind: kind === 'zram' ? 'unknown' : kind, reason: `${device.name}: ${reason}` }
}

/** The mount that holds a path: the longest mount point that prefixes it. */
export function mountFor<T extends { mount: string }>(mounts: T[], path: string): T | null {
  let best: T | null = null
  for (const mount of mounts) {
    const prefix = mount.mount.endsWith('/') ? mount.mount : `${mount.mount}/`
    if (
      (path === mount.mount || path.startsWith(prefix) || mount.mount === '/') &&
      (!best || mount.mount.length > best.mount.length)
    ) {
      best = mount
    }
  }
  return best
}
