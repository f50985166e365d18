import { stat } from 'node:fs/promises'
import { parseProcSwaps } from '../parsers/proc-swaps.js'
import { classifyBlockDevice, resolveBlockDevice } from './block-device.js'
import { type MountFacts, mountFor } from './storage.js'

export type SwapDeviceKind = 'nvme' | 'ssd' | 'hdd' | 'zram' | 'unknown' | 'none'

/** "major:minor" of a device number, with the kernel's split of the 64-bit dev_t. */
export function majorMinor(rdev: number): string {
  const dev = BigInt(rdev)
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn)
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn)
  return `${major}:${minor}`
}

/**
 * Total swap and the kind of device the largest swap area sits on: a partition's disk, a swap file's
 * filesystem, or zram (compressed RAM, which is no relief for memory pressure of the size training causes).
 */
export async function readSwap(
  swapsText: string,
  mounts: MountFacts[],
  sysRoot = '/sys',
): Promise<{ totalBytes: number; deviceKind: SwapDeviceKind }> {
  const entries = parseProcSwaps(swapsText).sort((a, b) => b.sizeBytes - a.sizeBytes)
  const totalBytes = entries.reduce((sum, entry) => sum + entry.sizeBytes, 0)
  const largest = entries[0]
  if (!largest || totalBytes === 0) return { totalBytes: 0, deviceKind: 'none' }
  if (/\/zram\d+$/.test(largest.filename)) return { totalBytes, deviceKind: 'zram' }
  if (largest.type === 'file')
    return { totalBytes, deviceKind: mountFor(mounts, largest.filename)?.kind ?? 'unknown' }
  try {
    const device = await resolveBlockDevice(majorMinor((await stat(largest.filename)).rdev), sysRoot)
    return { totalBytes, deviceKind: device ? classifyBlockDevice(device).kind : 'unknown' }
  } catch {
    return { totalBytes, deviceKind: 'unknown' }
  }
}
