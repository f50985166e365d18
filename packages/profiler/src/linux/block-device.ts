import { realpath } from 'node:fs/promises'
import { join } from 'node:path'
import { listDir, readValue } from '../system/read.js'

export type BlockKind = 'nvme' | 'ssd' | 'hdd' | 'zram' | 'unknown'

export interface BlockDeviceFacts {
  /** Kernel name of the whole disk (`nvme0n1`, `sda`, `vda`), after partitions and device-mapper are followed. */
  name: string
  /** Resolved sysfs path of the disk (tells virtio and USB apart). */
  sysPath: string
  rotational: string | null
  removable: string | null
  vendor: string | null
  model: string | null
}

/** Vendors and models of disks that a hypervisor or cloud presents: their `rotational` flag says nothing. */
const VIRTUAL_DISK = /qemu|vmware|virtual|msft|google|vbox|amazon elastic block store|xen|persistentdisk/i

/**
 * The kind of a disk, with the reason. `queue/rotational` is only trusted for physical disks on a physical bus:
 * virtio, Xen and hypervisor-emulated disks report 1 for SSD-backed storage, and USB bridges report whatever
 * they like, so those are "unknown" rather than a guess.
 */
export function classifyBlockDevice(facts: BlockDeviceFacts): { kind: BlockKind; reason: string } {
  const { name, sysPath } = facts
  if (name.startsWith('zram')) return { kind: 'zram', reason: 'compressed RAM (zram)' }
  if (/^(loop|ram|nbd|rbd|md)\d/.test(name))
    return { kind: 'unknown', reason: `${name} is a virtual block device` }
  if (/\/usb\d*\//.test(sysPath))
    return { kind: 'unknown', reason: 'USB-attached: the bridge does not report the medium reliably' }
  if (/^(vd|xvd)[a-z]/.test(name) || /\/virtio\d*\//.test(sysPath)) {
    return { kind: 'unknown', reason: 'virtual disk (virtio/Xen): the host storage behind it is not visible' }
  }
  if (VIRTUAL_DISK.test(`${facts.vendor ?? ''} ${facts.model ?? ''}`)) {
    return {
      kind: 'unknown',
      reason: `virtual disk (${[facts.vendor, facts.model].filter(Boolean).join(' ')})`,
    }
  }
  if (name.startsWith('nvme')) return { kind: 'nvme', reason: 'NVMe controller' }
  if (name.startsWith('mmcblk')) return { kind: 'unknown', reason: 'eMMC/SD card' }
  if (facts.removable === '1') return { kind: 'unknown', reason: 'removable medium' }
  if (facts.rotational === '0') return { kind: 'ssd', reason: 'non-rotational physical disk' }
  if (facts.rotational === '1') return { kind: 'hdd', reason: 'rotational physical disk' }
  return { kind: 'unknown', reason: 'the kernel does not say' }
}

/**
 * Follows a "major:minor" to the disk behind it: partition → disk, device-mapper/md → its first slave.
 * Null when sysfs has no such device (overlay, network and pseudo filesystems).
 */
export async function resolveBlockDevice(
  majorMinor: string,
  sysRoot = '/sys',
  depth = 0,
): Promise<BlockDeviceFacts | null> {
  if (depth > 4) return null
  let path: string
  try {
    path = await realpath(join(sysRoot, 'dev/block', majorMinor))
  } catch {
    return null
  }
  if ((await readValue(join(path, 'partition'))) !== null) path = join(path, '..')
  const name = path.split('/').at(-1) ?? ''
  const slaves = await listDir(join(path, 'slaves'))
  if (slaves.length > 0 && (name.startsWith('dm-') || name.startsWith('md'))) {
    const slaveDev = await readValue(join(path, 'slaves', slaves[0] as string, 'dev'))
    if (slaveDev) return resolveBlockDevice(slaveDev, sysRoot, depth + 1)
  }
  return {
    name,
    sysPath: path,
    rotational: await readValue(join(path, 'queue/rotational')),
    removable: await readValue(join(path, 'removable')),
    vendor: await readValue(join(path, 'device/vendor')),
    model: await readValue(join(path, 'device/model')),
  }
}
