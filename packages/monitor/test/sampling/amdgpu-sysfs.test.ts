import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { findAmdGpuDevices, readAmdGpus } from '../../src/sampling/amdgpu-sysfs.js'

const root = fileURLToPath(new URL('../fixtures/sysfs/rx7900xtx-workstation', import.meta.url))

describe('amdgpu sysfs', () => {
  it('finds the AMD card (not the Intel iGPU or a connector) and reads it in SI units', () => {
    const devices = findAmdGpuDevices(root)
    expect(devices).toHaveLength(1)
    expect(readAmdGpus(devices)).toEqual([
      {
        index: 0,
        name: 'AMD GPU 0x744c',
        vendor: 'amd',
        memoryUsedBytes: 17179869184,
        memoryTotalBytes: 25753026560,
        utilizationPercent: 87,
        temperatureC: 71,
        powerWatts: 287,
        powerLimitWatts: 327,
      },
    ])
  })

  it('leaves out a card whose files vanished', () => {
    const copy = mkdtempSync(join(tmpdir(), 'rigfit-amd-'))
    cpSync(root, copy, { recursive: true })
    const devices = findAmdGpuDevices(copy)
    rmSync(join(copy, 'class', 'drm', 'card0'), { recursive: true })
    expect(readAmdGpus(devices)).toEqual([])
  })
})
