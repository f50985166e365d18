import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { buildProfile } from '../src/build-profile.js'
import { emptyCollection, type ProbeCollection } from '../src/collect-probes.js'
import { linuxSystemInformationNeeds } from '../src/linux/si-fallbacks.js'
import { parseCpuinfo } from '../src/parsers/cpuinfo.js'
import { fixture } from './helpers.js'

const GIB = 1024 ** 3

/** What systeminformation could answer, with values no Linux probe would give, so that any use of them shows. */
const ANSWERS: Record<string, Record<string, unknown>> = {
  osInfo: { distro: 'Decoy Linux 99', release: '99.9' },
  cpu: {
    manufacturer: 'DecoyVendor',
    brand: 'Decoy CPU 9000',
    cores: 77,
    physicalCores: 33,
    speed: 9.87,
    flags: 'avx2 avx512f fma',
  },
  system: { virtual: true },
}

const cpuinfos: Record<string, string> = {
  'xeon vm': fixture('cpuinfo/ci-vm-xeon-2vcpu.txt'),
  graviton: fixture('cpuinfo/aws-graviton3-4vcpu.txt'),
  'no brand, no flags': 'processor\t: 0\nprocessor\t: 1\n',
  'with @ GHz': fixture('cpuinfo/ci-vm-xeon-2vcpu.txt').replace(
    /^model name\s*:.*$/gm,
    'model name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz',
  ),
}
if (existsSync('/proc/cpuinfo')) cpuinfos['this machine'] = readFileSync('/proc/cpuinfo', 'utf8')

/** Every combination of what the Linux probes may leave out. */
function* collections(): Generator<[string, ProbeCollection]> {
  const sysfsCases = [
    { baseGHz: 2.25, boostGHz: 3.5, numaNodes: 1, packageTdpWatts: null },
    { baseGHz: null, boostGHz: 3.5, numaNodes: 1, packageTdpWatts: null },
    { baseGHz: null, boostGHz: null, numaNodes: 1, packageTdpWatts: null },
    null,
  ]
  const releases: (Record<string, string> | null)[] = [
    { PRETTY_NAME: 'Ubuntu 22.04.4 LTS', VERSION_ID: '22.04' },
    { PRETTY_NAME: 'Arch Linux' },
    null,
  ]
  const hosts = [
    { container: false, virtualized: false, hypervisor: null },
    { container: false, virtualized: null, hypervisor: null },
    null,
  ]
  for (const [cpuName, text] of [...Object.entries(cpuinfos), ['unread', null] as const])
    for (const [s, cpuSysfs] of sysfsCases.entries())
      for (const [r, osRelease] of releases.entries())
        for (const [h, linuxHost] of hosts.entries())
          yield [
            `${cpuName} sysfs#${s} release#${r} host#${h}`,
            {
              ...emptyCollection({ records: [], raw: [] }),
              platform: 'linux',
              arch: cpuName === 'graviton' ? 'arm64' : 'x64',
              hostname: 'node-1',
              kernel: '6.8.0',
              os: {
                totalmem: 64 * GIB,
                freemem: 50 * GIB,
                cpuModel: null,
                cpuCount: 2,
                availableParallelism: 2,
              },
              cpuinfo: text === null ? null : parseCpuinfo(text),
              cpuSysfs,
              osRelease,
              linuxHost,
            },
          ]
}

function profileWith(c: ProbeCollection, functions: string[]) {
  const si: Record<string, unknown> = Object.fromEntries(functions.map((name) => [name, ANSWERS[name]]))
  // On Linux systeminformation's top clock is lscpu's "CPU max MHz", the cpufreq file readCpuSysfs reads: it
  // says what sysfs says, and nothing (0) where cpufreq is absent.
  if (si.cpu) si.cpu = { ...ANSWERS.cpu, speedMax: c.cpuSysfs?.boostGHz ?? 0 }
  return buildProfile({ ...c, si }, { createdAt: '2026-01-01T00:00:00.000Z' })
}

describe('linuxSystemInformationNeeds', () => {
  it('leaves out only the functions whose answers cannot change the profile', () => {
    let skipped = 0
    for (const [name, c] of collections()) {
      const needs = linuxSystemInformationNeeds(c)
      const unneeded = Object.keys(ANSWERS).filter((fn) => !needs.includes(fn))
      skipped += unneeded.length
      // Answers of the functions left out are ignored by the profile, whatever they say.
      expect(profileWith(c, [...needs, ...unneeded]), name).toEqual(profileWith(c, needs))
    }
    expect(skipped).toBeGreaterThan(0)
  })

  it('asks for each function when a field it backs is missing', () => {
    const asked = new Set<string>()
    for (const [name, c] of collections()) {
      for (const fn of linuxSystemInformationNeeds(c)) {
        asked.add(fn)
        // A function asked for where a Linux probe left a gap that its answer fills.
        const withIt = profileWith(c, [fn])
        const without = profileWith(c, [])
        expect(withIt, `${name}: ${fn}`).not.toEqual(without)
      }
    }
    expect([...asked].sort()).toEqual(['cpu', 'osInfo', 'system'])
  })

  it('needs nothing on a machine whose /proc and /sys say everything', () => {
    const [, full] = collections().next().value as [string, ProbeCollection]
    expect(linuxSystemInformationNeeds(full)).toEqual([])
  })
})
