import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readNetworkPorts } from '../../src/linux/network-ports.js'

const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

/** A sysfs tree with the files the kernel writes for each interface and RDMA port. */
function sysfs(
  net: Record<string, { type: string; operstate: string; speed?: string; physical: boolean }>,
  rdma: Record<string, { link_layer: string; state: string; rate: string }>,
): string {
  const root = mkdtempSync(join(tmpdir(), 'rigfit-sysfs-net-'))
  roots.push(root)
  for (const [name, entry] of Object.entries(net)) {
    const dir = join(root, 'class/net', name)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'type'), `${entry.type}\n`)
    writeFileSync(join(dir, 'operstate'), `${entry.operstate}\n`)
    if (entry.speed !== undefined) writeFileSync(join(dir, 'speed'), `${entry.speed}\n`)
    if (entry.physical) symlinkSync(root, join(dir, 'device'))
  }
  for (const [path, entry] of Object.entries(rdma)) {
    const dir = join(root, 'class/infiniband', path.replace('/', '/ports/'))
    mkdirSync(dir, { recursive: true })
    for (const [file, value] of Object.entries(entry)) writeFileSync(join(dir, file), `${value}\n`)
  }
  return root
}

describe('readNetworkPorts', () => {
  it('reads InfiniBand, RoCE and physical Ethernet ports as the kernel reports them', async () => {
    const root = sysfs(
      {
        lo: { type: '772', operstate: 'unknown', physical: false },
        eno1: { type: '1', operstate: 'up', speed: '25000', physical: true },
        eno2: { type: '1', operstate: 'down', speed: '-1', physical: true },
        docker0: { type: '1', operstate: 'up', speed: '10000', physical: false },
        ib0: { type: '32', operstate: 'up', speed: '200000', physical: true },
      },
      {
        'mlx5_0/1': { link_layer: 'InfiniBand', state: '4: ACTIVE', rate: '200 Gb/sec (4X HDR)' },
        'mlx5_1/1': { link_layer: 'Ethernet', state: '4: ACTIVE', rate: '100 Gb/sec (4X EDR)' },
        'mlx5_2/1': { link_layer: 'InfiniBand', state: '1: DOWN', rate: '10 Gb/sec (4X SDR)' },
      },
    )
    expect(await readNetworkPorts(root)).toEqual([
      { name: 'mlx5_0/1', kind: 'infiniband', speedGbps: 200, up: true },
      { name: 'mlx5_1/1', kind: 'roce', speedGbps: 100, up: true },
      { name: 'mlx5_2/1', kind: 'infiniband', speedGbps: null, up: false },
      { name: 'eno1', kind: 'ethernet', speedGbps: 25, up: true },
      { name: 'eno2', kind: 'ethernet', speedGbps: null, up: false },
    ])
  })

  it('finds nothing on a machine without the sysfs classes (a container, not Linux)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rigfit-sysfs-empty-'))
    roots.push(root)
    expect(await readNetworkPorts(root)).toEqual([])
  })
})
