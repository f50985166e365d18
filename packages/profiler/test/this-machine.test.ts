import { existsSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { HardwareProfile } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { collectProfile } from '../src/collect-profile.js'
import { formatProfileSummary } from '../src/summary.js'

const hasGpuDevice = existsSync('/dev/nvidiactl') || existsSync('/dev/kfd') || existsSync('/dev/dri')
const rootDisk = (): string | null => {
  const line = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .find((entry) => entry.split(' ')[4] === '/')
  return line?.split(' - ')[1]?.split(' ')[1] ?? null
}

describe.runIf(process.platform === 'linux')('the profile of this machine', () => {
  it('is valid, matches what the OS says, and states clearly when no GPU was found', async () => {
    const profile = await collectProfile()
    expect(() => HardwareProfile.parse(profile)).not.toThrow()
    expect(profile.source).toBe('detected')
    expect(profile.cpu.logicalCores).toBe(os.cpus().length)
    expect(profile.cpu.usableCores).toBeLessThanOrEqual(os.availableParallelism())
    expect(profile.memory.totalBytes).toBeLessThanOrEqual(os.totalmem())
    expect(profile.memory.usableBytes).toBe(profile.memory.totalBytes - profile.memory.osReserveBytes)
    expect(profile.probes.find((probe) => probe.name === 'cpu')?.ok).toBe(true)
    expect(profile.probes.find((probe) => probe.name === 'memory')?.ok).toBe(true)
    if (!hasGpuDevice) {
      expect(profile.gpus).toEqual([])
      expect(profile.notes[0]).toMatch(/^No GPU found/)
      expect(formatProfileSummary(profile)).toMatch(/GPU\s+none found/)
      expect(profile.interconnect.kind).toBe('none')
    }
    if (rootDisk()?.startsWith('/dev/vd')) {
      expect(profile.storage.find((disk) => disk.mount === '/')?.kind).toBe('unknown')
    }
  })
})
