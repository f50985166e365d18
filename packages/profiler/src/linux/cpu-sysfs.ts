import { join } from 'node:path'
import { listDir, readValue } from '../system/read.js'

export interface CpuSysfsFacts {
  baseGHz: number | null
  boostGHz: number | null
  numaNodes: number
  /** The package's long-term power limit (RAPL PL1), when the kernel exposes it. */
  packageTdpWatts: number | null
}

function khzToGHz(raw: string | null): number | null {
  const khz = Number(raw)
  return raw && Number.isFinite(khz) && khz > 0 ? Math.round(khz / 10_000) / 100 : null
}

/** Counts the nodes in a kernel range list such as "0", "0-1" or "0,2-3". */
export function countRangeList(list: string | null): number {
  if (!list) return 0
  let count = 0
  for (const part of list.split(',')) {
    const [from, to] = part.split('-').map(Number)
    if (from === undefined || !Number.isFinite(from)) continue
    count += to === undefined ? 1 : Number.isFinite(to) && to >= from ? to - from + 1 : 0
  }
  return count
}

/** CPU clocks (cpufreq), NUMA node count and RAPL package power limit from sysfs. */
export async function readCpuSysfs(sysRoot = '/sys'): Promise<CpuSysfsFacts> {
  const cpufreq = join(sysRoot, 'devices/system/cpu/cpu0/cpufreq')
  const numa = countRangeList(await readValue(join(sysRoot, 'devices/system/node/online')))
  let packageTdpWatts: number | null = null
  for (const zone of await listDir(join(sysRoot, 'class/powercap'))) {
    if (!/^intel-rapl:\d+$/.test(zone)) continue
    const dir = join(sysRoot, 'class/powercap', zone)
    if (!(await readValue(join(dir, 'name')))?.startsWith('package')) continue
    const microwatts = Number(await readValue(join(dir, 'constraint_0_power_limit_uw')))
    if (Number.isFinite(microwatts) && microwatts > 0)
      packageTdpWatts = (packageTdpWatts ?? 0) + microwatts / 1e6
  }
  return {
    baseGHz: khzToGHz(await readValue(join(cpufreq, 'base_frequency'))),
    boostGHz: khzToGHz(await readValue(join(cpufreq, 'cpuinfo_max_freq'))),
    numaNodes: Math.max(1, numa),
    packageTdpWatts: packageTdpWatts === null ? null : Math.round(packageTdpWatts),
  }
}
