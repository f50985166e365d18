import type { HardwareProfile } from '@rigfit/core'
import { gib } from './format.js'

/** A few lines of hardware summary for `analyze` (`rigfit profile` prints the full profile). */
export function renderProfileSummary(profile: HardwareProfile): string {
  const cpu = profile.cpu
  const gpus = profile.gpus
  const gpuLine =
    gpus.length === 0
      ? 'GPU: none found — plans train on the CPU'
      : gpus
          .map(
            (gpu) =>
              `GPU ${gpu.index}: ${gpu.name}, ${gib(gpu.vramUsableBytes)}${gpu.unifiedMemory ? ' working set (unified memory)' : ''}${gpu.computeCapability ? `, compute ${gpu.computeCapability}` : ''}${gpu.integrated && !gpu.unifiedMemory ? ' (integrated, not used for training)' : ''}`,
          )
          .join('\n')
  const lines = [
    `System: ${profile.host.distro} ${profile.host.arch}${profile.source !== 'detected' ? ` (${profile.source}${profile.overrides.length ? `: ${profile.overrides.join(', ')}` : ''})` : ''}`,
    `CPU: ${cpu.brand}, ${cpu.physicalCores} cores / ${cpu.logicalCores} threads${cpu.usableCores < cpu.logicalCores ? ` (${cpu.usableCores} usable)` : ''}`,
    `RAM: ${gib(profile.memory.totalBytes)} total, ${gib(profile.memory.usableBytes)} usable for training${profile.memory.bandwidthGBs ? `, ${profile.memory.bandwidthGBs.toFixed(1)} GB/s` : ''}`,
    gpuLine,
  ]
  if (gpus.length > 1) lines.push(`Interconnect: ${profile.interconnect.kind}`)
  if (profile.power.batteryPresent) {
    lines.push(
      `Power: ${profile.power.onBattery ? 'on battery' : 'on AC'}${profile.power.percent !== null ? `, ${profile.power.percent}%` : ''}`,
    )
  }
  return lines.join('\n')
}
