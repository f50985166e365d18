import type { ProbeCollection } from '../collect-probes.js'

/**
 * The systeminformation functions a Linux profile still needs once /proc and /sys have been read: each is a
 * fallback (build-profile.ts reads its fields only where the Linux probes left a gap), and each costs a dozen
 * child processes (hostname, dmidecode, dmesg, lscpu...), several times the CPU of every other probe together.
 * A function is asked for only when a field it backs is missing, so the profile is the same either way.
 */
export function linuxSystemInformationNeeds(c: ProbeCollection): string[] {
  const needs: string[] = []
  // host.distro and host.release
  if (!c.osRelease?.PRETTY_NAME || !c.osRelease.VERSION_ID) needs.push('osInfo')
  // cpu vendor, brand, cores, base clock and ISA flags. The boost clock is not a reason: systeminformation reads
  // it from lscpu's "CPU max MHz", which is the cpufreq value readCpuSysfs has already read.
  const info = c.cpuinfo
  const brandGHz = Number(/@\s*([\d.]+)\s*GHz/i.exec(info?.brand ?? '')?.[1])
  const baseClockMissing =
    (c.cpuSysfs?.baseGHz ?? null) === null && !(Number.isFinite(brandGHz) && brandGHz > 0)
  if (
    !info ||
    info.vendor === null ||
    info.brand === null ||
    !info.logicalCores ||
    info.physicalCores === null ||
    info.flags.size === 0 ||
    baseClockMissing
  )
    needs.push('cpu')
  // host.virtualized
  if ((c.linuxHost?.virtualized ?? null) === null) needs.push('system')
  return needs
}
