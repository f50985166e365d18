import { basename, join } from 'node:path'
import { listDir, readLink, readText, readValue } from '../system/read.js'

export type PciGpuVendor = 'nvidia' | 'amd' | 'intel'

export interface PciGpu {
  busId: string
  vendor: PciGpuVendor
  deviceId: string
  driver: string | null
  /** amdgpu: dedicated VRAM (for an APU, the BIOS carve-out); null where the driver does not say. */
  vramTotalBytes: number | null
  vramUsedBytes: number | null
  productName: string | null
  /** From the KFD topology (ROCm's view): `gfx90a`, `gfx1100`. */
  gfxTarget: string | null
  temperatureC: number | null
  powerCapWatts: number | null
  pcie: { gen: number | null; width: number | null; maxGen: number | null; maxWidth: number | null }
}

const VENDORS: Record<string, PciGpuVendor> = { '0x10de': 'nvidia', '0x1002': 'amd', '0x8086': 'intel' }

/** PCIe generation from a link speed ("16.0 GT/s PCIe", "8 GT/s"). */
export function pcieGenFromSpeed(speed: string | null): number | null {
  const gts = Number.parseFloat(speed ?? '')
  if (!Number.isFinite(gts)) return null
  const generations: [number, number][] = [
    [2.5, 1],
    [5, 2],
    [8, 3],
    [16, 4],
    [32, 5],
    [64, 6],
  ]
  return generations.find(([rate]) => Math.abs(rate - gts) < 0.5)?.[1] ?? null
}

/** `gfx_target_version` of the KFD topology (major*10000 + minor*100 + stepping) as a gfx name. */
export function gfxTargetFromVersion(version: number): string | null {
  if (!Number.isInteger(version) || version <= 0) return null
  const major = Math.floor(version / 10_000)
  const minor = Math.floor(version / 100) % 100
  const stepping = version % 100
  return `gfx${major}${minor.toString(16)}${stepping.toString(16)}`
}

/** Bus id → gfx target, from /sys/class/kfd/kfd/topology/nodes/N/properties (CPU nodes have version 0). */
async function readKfdTargets(sysRoot: string): Promise<Map<string, string>> {
  const targets = new Map<string, string>()
  const nodesDir = join(sysRoot, 'class/kfd/kfd/topology/nodes')
  for (const node of await listDir(nodesDir)) {
    const text = await readText(join(nodesDir, node, 'properties'))
    if (!text) continue
    const field = (key: string) => Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(text)?.[1])
    const target = gfxTargetFromVersion(field('gfx_target_version'))
    const location = field('location_id')
    if (!target || !Number.isFinite(location)) continue
    const domain = Number.isFinite(field('domain')) ? field('domain') : 0
    const bus = (location >> 8) & 0xff
    const device = (location >> 3) & 0x1f
    const fn = location & 0x7
    const busId = `${domain.toString(16).padStart(4, '0')}:${bus.toString(16).padStart(2, '0')}:${device.toString(16).padStart(2, '0')}.${fn}`
    targets.set(busId, target)
  }
  return targets
}

/**
 * Display controllers of NVIDIA, AMD and Intel on the PCI bus, straight from sysfs (no `lspci` needed), with
 * what the amdgpu driver exposes. Virtual and BMC display adapters (virtio, QEMU, ASPEED) are not GPUs for
 * training and are left out.
 */
export async function readPciGpus(sysRoot = '/sys'): Promise<PciGpu[]> {
  const devicesDir = join(sysRoot, 'bus/pci/devices')
  const kfd = await readKfdTargets(sysRoot)
  const gpus: PciGpu[] = []
  for (const busId of await listDir(devicesDir)) {
    const dir = join(devicesDir, busId)
    const pciClass = await readValue(join(dir, 'class'))
    if (!pciClass?.startsWith('0x03')) continue
    const vendor = VENDORS[(await readValue(join(dir, 'vendor'))) ?? '']
    if (!vendor) continue
    const driverLink = await readLink(join(dir, 'driver'))
    const hwmon = (await listDir(join(dir, 'hwmon')))[0]
    const hwmonDir = hwmon ? join(dir, 'hwmon', hwmon) : null
    const number = async (path: string | null) => {
      const value = Number(path ? await readValue(path) : null)
      return path && Number.isFinite(value) && value > 0 ? value : null
    }
    const tempMilli = await number(hwmonDir && join(hwmonDir, 'temp1_input'))
    const capMicro = await number(hwmonDir && join(hwmonDir, 'power1_cap'))
    gpus.push({
      busId,
      vendor,
      deviceId: (await readValue(join(dir, 'device'))) ?? 'unknown',
      driver: driverLink ? basename(driverLink) : null,
      vramTotalBytes: await number(join(dir, 'mem_info_vram_total')),
      vramUsedBytes: await number(join(dir, 'mem_info_vram_used')),
      productName: await readValue(join(dir, 'product_name')),
      gfxTarget: kfd.get(busId) ?? null,
      temperatureC: tempMilli === null ? null : tempMilli / 1000,
      powerCapWatts: capMicro === null ? null : capMicro / 1e6,
      pcie: {
        gen: pcieGenFromSpeed(await readValue(join(dir, 'current_link_speed'))),
        width: await number(join(dir, 'current_link_width')),
        maxGen: pcieGenFromSpeed(await readValue(join(dir, 'max_link_speed'))),
        maxWidth: await number(join(dir, 'max_link_width')),
      },
    })
  }
  return gpus
}
