import type { Gpu, HardwareProfile } from '@rigfit/core'
import { formatBytes } from './format.js'

export interface SummaryStyle {
  bold: (text: string) => string
  dim: (text: string) => string
  warn: (text: string) => string
}

const PLAIN: SummaryStyle = { bold: (t) => t, dim: (t) => t, warn: (t) => t }

const orDash = (value: string | number | null | undefined, suffix = ''): string =>
  value === null || value === undefined || value === '' ? '—' : `${value}${suffix}`

/** One line of the summary: a label and its text. */
type Row = [label: string, text: string]

/** A compact, readable summary of a profile for the terminal: one block per part, failed probes at the end. */
export function formatProfileSummary(profile: HardwareProfile, style: SummaryStyle = PLAIN): string {
  const rows: Row[] = [
    ['CPU', cpuText(profile.cpu)],
    ['Memory', memoryText(profile.memory)],
    ...deviceRows(profile, style),
    ['Accel', accelerationText(profile.acceleration)],
    ...storageRows(profile.storage),
    ['Network', networkText(profile.network)],
    ['Power', powerText(profile.power)],
    ['Thermal', thermalText(profile)],
    ...(profile.benchmark.ran
      ? [['Bench', `${profile.benchmark.ms} ms — ${profile.benchmark.notes.join('; ')}`] as Row]
      : []),
    ...profile.notes.map((note): Row => ['Note', note]),
    ...probeRows(profile.probes, style),
  ]
  const lines = [
    headerLine(profile, style),
    ...rows.map(([label, text]) => `${style.bold(label.padEnd(9))}${text}`),
  ]
  return `${lines.join('\n')}\n`
}

/** The host, its OS and where the profile came from (detected, or what was overridden). */
function headerLine(profile: HardwareProfile, style: SummaryStyle): string {
  const { host } = profile
  const context = [
    host.container.detected ? 'container' : null,
    host.virtualized ? 'virtual machine' : null,
  ].filter(Boolean)
  const source =
    profile.source === 'detected'
      ? ''
      : ` [${profile.source}${profile.overrides.length > 0 ? `: ${profile.overrides.join(', ')}` : ''}]`
  return style.bold(
    `${host.hostname} — ${host.distro}, ${host.platform} ${host.kernel}, ${host.arch}${context.length > 0 ? ` (${context.join(', ')})` : ''}${source}`,
  )
}

function cpuText(cpu: HardwareProfile['cpu']): string {
  const flags = Object.entries(cpu.flags)
    .filter(([, on]) => on)
    .map(([flag]) => flag.toUpperCase())
  const cores = `${cpu.physicalCores} cores / ${cpu.logicalCores} threads${cpu.usableCores < cpu.logicalCores ? ` (${cpu.usableCores} usable)` : ''}`
  const clocks =
    cpu.baseGHz || cpu.boostGHz
      ? `${orDash(cpu.baseGHz)}${cpu.boostGHz ? `–${cpu.boostGHz}` : ''} GHz`
      : 'clock unknown'
  return [
    cpu.brand,
    cores,
    clocks,
    flags.join(' ') || 'no AVX2/AVX-512/NEON',
    `${cpu.numaNodes} NUMA node${cpu.numaNodes > 1 ? 's' : ''}`,
  ].join(' · ')
}

function memoryText(memory: HardwareProfile['memory']): string {
  const swap =
    memory.swap.deviceKind === 'none'
      ? 'no swap'
      : `swap ${formatBytes(memory.swap.totalBytes)} on ${memory.swap.deviceKind}`
  const bandwidth =
    memory.bandwidthGBs === null ? 'bandwidth not measured' : `${memory.bandwidthGBs} GB/s measured`
  return [
    `${formatBytes(memory.totalBytes)}${memory.limitedBy === 'cgroup' ? ' (container limit)' : ''}`,
    `${formatBytes(memory.availableBytes)} available`,
    `${formatBytes(memory.usableBytes)} usable after ${formatBytes(memory.osReserveBytes)} OS reserve`,
    swap,
    bandwidth,
  ].join(' · ')
}

/** One row per GPU (or a warning that there is none), then their links. */
function deviceRows(profile: HardwareProfile, style: SummaryStyle): Row[] {
  const rows: Row[] = []
  if (profile.gpus.length === 0) rows.push(['GPU', style.warn('none found — training would run on the CPU')])
  for (const gpu of profile.gpus) rows.push([`GPU ${gpu.index}`, describeGpu(gpu)])
  if (profile.gpus.length > 1 || profile.interconnect.kind !== 'none') {
    const links = profile.interconnect.links.map((link) => `${link.a}↔${link.b} ${link.detail.split(':')[0]}`)
    rows.push(['Links', `${profile.interconnect.kind}${links.length > 0 ? ` (${links.join(', ')})` : ''}`])
  }
  return rows
}

function accelerationText(accel: HardwareProfile['acceleration']): string {
  return [
    `CUDA ${orDash(accel.cuda)}`,
    `ROCm ${orDash(accel.rocm)}`,
    `Metal ${accel.metal ? 'yes' : 'no'}${accel.mps ? ' (MPS)' : ''}`,
    `OpenCL ${accel.opencl === null ? 'unknown' : accel.opencl ? 'yes' : 'no'}`,
    ...(accel.xpu ? ['Intel XPU'] : []),
  ].join(' · ')
}

function storageRows(storage: HardwareProfile['storage']): Row[] {
  if (storage.length === 0) return [['Storage', 'none detected']]
  return storage.map((disk): Row => {
    const speed =
      disk.readMBs === null && disk.writeMBs === null
        ? ''
        : ` · read ${orDash(disk.readMBs, ' MB/s')} · write ${orDash(disk.writeMBs, ' MB/s')}`
    return [
      'Storage',
      `${disk.mount} (${disk.fsType} on ${disk.device}) · ${disk.kind} · ${formatBytes(disk.freeBytes)} free of ${formatBytes(disk.totalBytes)}${speed}`,
    ]
  })
}

function networkText(network: HardwareProfile['network']): string {
  return network.status === 'measured'
    ? `${network.downloadMbps} Mbit/s download from ${network.target}`
    : network.status === 'offline'
      ? `unknown: ${network.target} could not be reached`
      : 'unknown (not measured; --benchmark with --network-url)'
}

function powerText(power: HardwareProfile['power']): string {
  const battery = power.batteryPresent
    ? `battery ${orDash(power.percent, '%')}${power.onBattery ? ', on battery' : ''}`
    : 'no battery'
  const ac = power.acOnline === null ? 'AC unknown' : power.acOnline ? 'on AC' : 'AC unplugged'
  return [battery, ac, `TDP budget ${orDash(power.tdpBudgetWatts, ' W')}`].join(' · ')
}

function thermalText(profile: HardwareProfile): string {
  const temps = [
    `CPU ${orDash(profile.thermal.cpuTempC, ' °C')}`,
    ...profile.gpus.map((gpu) => `GPU ${gpu.index} ${orDash(gpu.temperatureC, ' °C')}`),
  ]
  return `${temps.join(' · ')} · throttling risk ${profile.thermal.throttlingRisk}`
}

/** How many probes ran ok, failed or found nothing to probe, then each failure. */
function probeRows(probes: HardwareProfile['probes'], style: SummaryStyle): Row[] {
  const rows: Row[] = []
  const failed = probes.filter((probe) => !probe.ok && !probe.absent)
  const absent = probes.filter((probe) => probe.absent)
  const ok = probes.filter((probe) => probe.ok).length
  if (probes.length > 0) {
    rows.push([
      'Probes',
      `${ok} ok, ${failed.length} failed${absent.length > 0 ? `, not present here: ${absent.map((probe) => probe.name).join(', ')}` : ''}`,
    ])
  }
  for (const probe of failed)
    rows.push(['', style.warn(`✗ ${probe.name} (${probe.ms} ms): ${probe.error ?? 'failed'}`)])
  return rows
}

function describeGpu(gpu: Gpu): string {
  const free = gpu.vramFreeBytes === null ? '' : `, ${formatBytes(gpu.vramFreeBytes)} free`
  const memory = gpu.unifiedMemory
    ? `${formatBytes(gpu.vramUsableBytes)} usable of unified memory`
    : `${formatBytes(gpu.vramTotalBytes)} VRAM${free}`
  const capability = gpu.computeCapability
    ? `compute ${gpu.computeCapability}`
    : (gpu.gfxTarget ?? (gpu.metalFamily ? `Metal ${gpu.metalFamily}` : 'capability unknown'))
  const formats = (['fp16', 'bf16', 'tf32', 'fp8', 'int8'] as const)
    .map((format) => `${format.toUpperCase()} ${gpu[format]}`)
    .join(' ')
  const watts = gpu.powerLimitWatts ?? gpu.tdpWatts
  const parts = [
    gpu.name,
    memory,
    capability,
    gpu.tensorCores ? 'tensor cores' : gpu.tensorCores === false ? 'no tensor cores' : null,
    formats,
    watts === null
      ? null
      : `${watts} W${gpu.powerLimitWatts !== null && gpu.tdpWatts !== null && gpu.powerLimitWatts !== gpu.tdpWatts ? ` limit (TDP ${gpu.tdpWatts} W)` : ''}`,
    gpu.pcie.gen
      ? `PCIe ${gpu.pcie.gen}.0 x${orDash(gpu.pcie.width)}${gpu.pcie.maxGen && gpu.pcie.maxGen !== gpu.pcie.gen ? ` (max ${gpu.pcie.maxGen}.0)` : ''}`
      : null,
    gpu.migMode === 'enabled' ? 'MIG on' : null,
    gpu.driverVersion ? `driver ${gpu.driverVersion}` : null,
    gpu.catalog ? `catalog ${gpu.catalog.id}` : 'not in catalog',
  ]
  return parts.filter((part): part is string => part !== null).join(' · ')
}
