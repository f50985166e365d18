import os from 'node:os'
import type { NetworkPort, ProbeRecord } from '@rigfit/core'
import { type AmdProbeData, probeAmd } from './gpu/amd.js'
import { type NvidiaProbeData, probeNvidia } from './gpu/nvidia.js'
import { readCgroupLimits } from './linux/cgroup-reader.js'
import { type CpuSysfsFacts, readCpuSysfs } from './linux/cpu-sysfs.js'
import { type LinuxHostFacts, readLinuxHost } from './linux/host.js'
import { readNetworkPorts } from './linux/network-ports.js'
import { type PciGpu, readPciGpus } from './linux/pci-gpus.js'
import { readPowerSupplyEntries } from './linux/power-supply-reader.js'
import { linuxSystemInformationNeeds } from './linux/si-fallbacks.js'
import { type MountFacts, readMounts } from './linux/storage.js'
import { readSwap, type SwapDeviceKind } from './linux/swap.js'
import { readTemperatures, type TemperatureSensor } from './linux/thermal.js'
import type { CgroupLimits } from './parsers/cgroup.js'
import { type CpuinfoSummary, parseCpuinfo } from './parsers/cpuinfo.js'
import { type Meminfo, parseMeminfo } from './parsers/meminfo.js'
import { parseOsRelease } from './parsers/os-release.js'
import { parsePmsetBattery } from './parsers/pmset.js'
import { type PowerSummary, summarizePowerSupplies } from './parsers/power-supply.js'
import { parseSysctl } from './parsers/sysctl.js'
import { type MacDisplayGpu, parseSystemProfilerDisplays } from './parsers/system-profiler.js'
import { type IntelXpuRow, parseXpuSmiDiscovery } from './parsers/xpu-smi.js'
import {
  ProbeAbsent,
  ProbeContext,
  type ProfileProgressEvent,
  type RawProbeOutput,
  requireSuccess,
} from './probe-runner.js'
import { listDir } from './system/read.js'
import { runSystemInformation } from './system/systeminformation.js'

export const DEFAULT_PROBE_TIMEOUT_MS = 2000

export interface CollectOptions {
  /** Deadline of each probe in milliseconds (default 2000). */
  timeoutMs?: number
  env?: NodeJS.ProcessEnv
  onProgress?: (event: ProfileProgressEvent) => void
}

/** Everything the probes found, unassembled, with each probe's record and raw output. */
export interface ProbeCollection {
  platform: NodeJS.Platform
  arch: string
  hostname: string
  kernel: string
  os: {
    totalmem: number
    freemem: number
    cpuModel: string | null
    cpuCount: number
    availableParallelism: number
  }
  records: ProbeRecord[]
  raw: RawProbeOutput[]
  cpuinfo: CpuinfoSummary | null
  cpuSysfs: CpuSysfsFacts | null
  meminfo: Meminfo | null
  swap: { totalBytes: number; deviceKind: SwapDeviceKind } | null
  cgroup: CgroupLimits | null
  mounts: MountFacts[] | null
  power: PowerSummary | null
  thermal: { cpuTempC: number | null; sensors: TemperatureSensor[] } | null
  pciGpus: PciGpu[] | null
  /** InfiniBand, RoCE and physical Ethernet ports (Linux sysfs). */
  networkPorts: NetworkPort[] | null
  linuxHost: LinuxHostFacts | null
  osRelease: Record<string, string> | null
  nvidia: NvidiaProbeData | null
  amd: AmdProbeData | null
  xpu: IntelXpuRow[] | null
  rocmVersion: string | null
  opencl: boolean | null
  sysctl: Record<string, string> | null
  macDisplays: MacDisplayGpu[] | null
  /** systeminformation results by function name (osInfo, cpu, system, mem, fsSize, diskLayout, battery, graphics). */
  si: Record<string, unknown>
}

/**
 * The systeminformation functions worth their cost per platform: the general picture where /proc and /sys are
 * not. Linux asks only for what its own probes left out (linuxSystemInformationNeeds).
 */
const SI_FUNCTIONS: Partial<Record<NodeJS.Platform, string[]>> = {
  darwin: ['osInfo', 'cpu', 'system', 'mem', 'fsSize', 'diskLayout', 'cpuTemperature'],
  win32: ['osInfo', 'cpu', 'system', 'mem', 'fsSize', 'diskLayout', 'battery', 'graphics'],
}

/** This process's platform facts from Node's `os`, with every probe's part still empty. */
export function emptyCollection(ctx: Pick<ProbeContext, 'records' | 'raw'>): ProbeCollection {
  return {
    platform: process.platform,
    arch: process.arch,
    hostname: os.hostname(),
    kernel: os.release(),
    os: {
      totalmem: os.totalmem(),
      freemem: os.freemem(),
      cpuModel: os.cpus()[0]?.model ?? null,
      cpuCount: os.cpus().length,
      availableParallelism: os.availableParallelism(),
    },
    records: ctx.records,
    raw: ctx.raw,
    cpuinfo: null,
    cpuSysfs: null,
    meminfo: null,
    swap: null,
    cgroup: null,
    mounts: null,
    power: null,
    thermal: null,
    pciGpus: null,
    networkPorts: null,
    linuxHost: null,
    osRelease: null,
    nvidia: null,
    amd: null,
    xpu: null,
    rocmVersion: null,
    opencl: null,
    sysctl: null,
    macDisplays: null,
    si: {},
  }
}

/**
 * Runs every probe of this platform in parallel, each with its own deadline, and returns what they found.
 * Never throws for the machine's sake: a missing, hanging, failing or garbage-printing tool leaves its part
 * null and its record in `records`.
 */
export async function collectProbes(options: CollectOptions = {}): Promise<ProbeCollection> {
  const ctx = new ProbeContext({
    timeoutMs: options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
    env: options.env ?? process.env,
    onProgress: options.onProgress,
  })
  const platform = process.platform
  const collection = emptyCollection(ctx)
  const systemInformation = (functions: string[]) =>
    runSystemInformation(ctx, functions).then((si) => {
      collection.si = si
    })
  const tasks: Promise<unknown>[] = [
    probeNvidia(ctx).then((data) => {
      collection.nvidia = data
    }),
  ]
  // On Linux systeminformation only fills the gaps /proc and /sys leave, so it runs after them, if at all.
  if (platform === 'linux')
    tasks.push(
      Promise.all(linuxProbes(ctx, collection)).then(() =>
        systemInformation(linuxSystemInformationNeeds(collection)),
      ),
    )
  else tasks.push(systemInformation(SI_FUNCTIONS[platform] ?? []))
  if (platform === 'darwin') tasks.push(...macProbes(ctx, collection))
  if (platform === 'win32') collection.opencl = null
  await Promise.all(tasks)
  ctx.records.sort((a, b) => a.name.localeCompare(b.name))
  return collection
}

function linuxProbes(ctx: ProbeContext, c: ProbeCollection): Promise<unknown>[] {
  const cpu = ctx.probe('cpu', async (handle) => {
    c.cpuinfo = parseCpuinfo(await handle.file('/proc/cpuinfo'))
    c.cpuSysfs = await readCpuSysfs()
    if (c.cpuinfo.logicalCores === 0) handle.problem('/proc/cpuinfo lists no processors')
  })
  const storage = ctx.probe('storage', async (handle) => {
    c.mounts = await readMounts(await handle.file('/proc/self/mountinfo'))
    if (c.mounts.length === 0) handle.problem('no data filesystem found in /proc/self/mountinfo')
  })
  return [
    cpu,
    storage,
    ctx.probe('memory', async (handle) => {
      c.meminfo = parseMeminfo(await handle.file('/proc/meminfo'))
      if (!c.meminfo) throw new Error('/proc/meminfo has no MemTotal')
    }),
    storage.then(() =>
      ctx.probe('swap', async (handle) => {
        c.swap = await readSwap(await handle.file('/proc/swaps'), c.mounts ?? [])
      }),
    ),
    ctx.probe('cgroup', async (handle) => {
      c.cgroup = await readCgroupLimits(
        await handle.file('/proc/self/cgroup'),
        await handle.file('/proc/self/mountinfo'),
      )
    }),
    ctx.probe('power', async () => {
      c.power = summarizePowerSupplies(await readPowerSupplyEntries())
    }),
    ctx.probe('thermal', async () => {
      c.thermal = await readTemperatures()
    }),
    ctx.probe('pci', async () => {
      c.pciGpus = await readPciGpus()
    }),
    ctx.probe('network-ports', async () => {
      c.networkPorts = await readNetworkPorts()
    }),
    cpu.then(() =>
      ctx.probe('host', async (handle) => {
        c.osRelease = parseOsRelease(await handle.file('/etc/os-release').catch(() => ''))
        c.linuxHost = await readLinuxHost(c.cpuinfo?.flags ?? new Set(), ctx.options.env)
      }),
    ),
    probeAmd(ctx).then((data) => {
      c.amd = data
    }),
    ctx.probe('rocm', async (handle) => {
      const rocmPath = ctx.options.env.ROCM_PATH ?? '/opt/rocm'
      c.rocmVersion = (await handle.file(`${rocmPath}/.info/version`)).trim().split('-')[0] ?? null
    }),
    ctx.probe('xpu-smi', async (handle) => {
      const parsed = parseXpuSmiDiscovery(
        requireSuccess(await handle.tool('xpu-smi', ['discovery', '-j'])).stdout,
      )
      if (parsed.rows.length === 0) throw new Error(parsed.problems.join('; ') || 'xpu-smi listed no GPUs')
      if (parsed.problems.length > 0) handle.problem(parsed.problems.join('; '))
      c.xpu = parsed.rows
    }),
    ctx.probe('opencl', async () => {
      const icds = (await listDir('/etc/OpenCL/vendors')).filter((file) => file.endsWith('.icd'))
      c.opencl = icds.length > 0
      if (!c.opencl) throw new ProbeAbsent('no OpenCL ICD in /etc/OpenCL/vendors')
    }),
  ]
}

/** sysctl keys rigfit reads on macOS; unknown keys only make sysctl complain about that key. */
const MAC_SYSCTL_KEYS = [
  'hw.memsize',
  'hw.physicalcpu',
  'hw.logicalcpu',
  'hw.perflevel0.physicalcpu',
  'hw.cpufrequency',
  'hw.cpufrequency_max',
  'machdep.cpu.brand_string',
  'hw.optional.arm.FEAT_BF16',
  'hw.optional.AdvSIMD',
  'hw.optional.avx2_0',
  'hw.optional.avx512f',
  'hw.optional.fma',
  'iogpu.wired_limit_mb',
  'debug.iogpu.wired_limit',
]

function macProbes(ctx: ProbeContext, c: ProbeCollection): Promise<unknown>[] {
  c.opencl = true
  return [
    ctx.probe('sysctl', async (handle) => {
      const result = await handle.tool('sysctl', MAC_SYSCTL_KEYS)
      c.sysctl = parseSysctl(result.stdout)
      if (!c.sysctl['hw.memsize']) throw new Error(`sysctl: ${result.error ?? 'no hw.memsize in the output'}`)
    }),
    ctx.probe('system_profiler', async (handle) => {
      const result = requireSuccess(await handle.tool('system_profiler', ['SPDisplaysDataType', '-json']))
      const parsed = parseSystemProfilerDisplays(result.stdout)
      c.macDisplays = parsed.gpus
      if (parsed.problems.length > 0) handle.problem(parsed.problems.join('; '))
      if (parsed.gpus.length === 0) handle.problem('system_profiler listed no GPU')
    }),
    ctx.probe('pmset', async (handle) => {
      c.power = parsePmsetBattery(requireSuccess(await handle.tool('pmset', ['-g', 'batt'])).stdout)
    }),
  ]
}
