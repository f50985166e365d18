import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { classifyBlockDevice, resolveBlockDevice } from '../src/linux/block-device.js'
import { countRangeList } from '../src/linux/cpu-sysfs.js'
import { readPowerSupplyEntries } from '../src/linux/power-supply-reader.js'
import { dataMounts, mountFor } from '../src/linux/storage.js'
import { majorMinor } from '../src/linux/swap.js'
import { parseCgroupLimits, parseProcCgroup } from '../src/parsers/cgroup.js'
import { parseCpuinfo, trainingIsaFlags } from '../src/parsers/cpuinfo.js'
import { parseMeminfo } from '../src/parsers/meminfo.js'
import { parseMountinfo } from '../src/parsers/mountinfo.js'
import {
  parsePowerSupplyTree,
  powerSupplyEntriesFromDump,
  summarizePowerSupplies,
} from '../src/parsers/power-supply.js'
import { parseProcSwaps } from '../src/parsers/proc-swaps.js'
import { fixture } from './helpers.js'

describe('/sys/class/power_supply', () => {
  const machines: [string, string, ReturnType<typeof parsePowerSupplyTree>][] = [
    [
      'BAT0 + AC (Mains) charging; a mouse battery (scope Device) is ignored',
      'thinkpad-t14-bat0-acad-charging',
      { batteryPresent: true, onBattery: false, acOnline: true, percent: 87 },
    ],
    [
      'ADP1 offline: on battery, percent from charge_now / charge_full',
      'dell-xps-adp1-discharging',
      { batteryPresent: true, onBattery: true, acOnline: false, percent: 41 },
    ],
    [
      'USB-C only: AC is online when any USB supply is, whatever its name',
      'framework-13-usbc-only',
      { batteryPresent: true, onBattery: false, acOnline: true, percent: 63 },
    ],
    [
      'only a UPS (HID) battery: no machine battery, AC unknown',
      'desktop-ups-hid-only',
      { batteryPresent: false, onBattery: false, acOnline: null, percent: null },
    ],
  ]
  it.each(machines)('%s', (_label, machine, expected) => {
    expect(parsePowerSupplyTree(fixture(`power_supply/${machine}.txt`))).toEqual(expected)
  })

  it('falls back to the battery status when no adapter entry exists', () => {
    const entries = new Map([['BAT0', { type: 'Battery', status: 'Discharging', capacity: '20' }]])
    expect(summarizePowerSupplies(entries)).toEqual({
      batteryPresent: true,
      onBattery: true,
      acOnline: false,
      percent: 20,
    })
  })

  it('reads a real directory tree the same way as the recorded dump', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-ps-'))
    try {
      const dump = powerSupplyEntriesFromDump(fixture('power_supply/dell-xps-adp1-discharging.txt'))
      for (const [entry, files] of dump) {
        await mkdir(join(dir, entry))
        for (const [file, value] of Object.entries(files))
          await writeFile(join(dir, entry, file), `${value}\n`)
      }
      expect(summarizePowerSupplies(await readPowerSupplyEntries(dir))).toEqual(summarizePowerSupplies(dump))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('/proc/meminfo', () => {
  it('reads total, available and swap in bytes', () => {
    expect(parseMeminfo(fixture('meminfo/workstation-64g.txt'))).toEqual({
      totalBytes: 65768372 * 1024,
      availableBytes: 59207984 * 1024,
      swapTotalBytes: 8388604 * 1024,
      swapFreeBytes: 8388604 * 1024,
    })
  })

  it('estimates available memory on kernels without MemAvailable', () => {
    expect(parseMeminfo(fixture('meminfo/centos6-no-memavailable.txt'))?.availableBytes).toBe(
      (1207436 + 301220 + 4511028) * 1024,
    )
  })

  it('answers null without MemTotal', () => {
    expect(parseMeminfo('garbage')).toBeNull()
  })
})

describe('cgroup limits', () => {
  it('v2: cpu.max quota/period and memory.max', () => {
    expect(parseCgroupLimits(fixture('cgroup/docker-v2-4cpu-8g.txt'))).toEqual({
      version: 2,
      memoryLimitBytes: 8 * 1024 ** 3,
      cpuQuotaCores: 4,
    })
  })

  it('v1: memory.limit_in_bytes and cfs quota; the unlimited sentinel of a parent is no limit', () => {
    expect(parseCgroupLimits(fixture('cgroup/k8s-v1-2500m-4g.txt'))).toEqual({
      version: 1,
      memoryLimitBytes: 4 * 1024 ** 3,
      cpuQuotaCores: 2.5,
    })
  })

  it('"max" everywhere means no limit', () => {
    expect(parseCgroupLimits(fixture('cgroup/unlimited-v2-systemd-user.txt'))).toEqual({
      version: 2,
      memoryLimitBytes: null,
      cpuQuotaCores: null,
    })
  })

  it('a limit on a parent slice applies to the job inside it', () => {
    expect(parseCgroupLimits(fixture('cgroup/nested-v2-slice-limit.txt'))).toEqual({
      version: 2,
      memoryLimitBytes: 32 * 1024 ** 3,
      cpuQuotaCores: 16,
    })
  })

  it('parses /proc/self/cgroup for v1 and v2', () => {
    expect(parseProcCgroup('4:memory:/docker/abc\n1:cpu,cpuacct:/docker/abc\n0::/\n')).toEqual([
      { hierarchy: '4', controllers: ['memory'], path: '/docker/abc' },
      { hierarchy: '1', controllers: ['cpu', 'cpuacct'], path: '/docker/abc' },
      { hierarchy: '0', controllers: [], path: '/' },
    ])
  })
})

describe('/proc/cpuinfo', () => {
  it('x86 VM: cores, brand and the ISA flags that matter for training', () => {
    const info = parseCpuinfo(fixture('cpuinfo/ci-vm-xeon-2vcpu.txt'))
    expect(info).toMatchObject({
      vendor: 'GenuineIntel',
      brand: 'Intel(R) Xeon(R) Processor',
      logicalCores: 2,
      physicalCores: 2,
    })
    expect(trainingIsaFlags(info.flags, 'x64')).toEqual({
      avx2: true,
      avx512: true,
      avx512bf16: true,
      amx: true,
      fma: true,
      neon: false,
    })
    expect(info.flags.has('hypervisor')).toBe(true)
  })

  it('ARM (Graviton 3): NEON and BF16 from Features, vendor from the implementer', () => {
    const info = parseCpuinfo(fixture('cpuinfo/aws-graviton3-4vcpu.txt'))
    expect(info).toMatchObject({ vendor: 'ARM', logicalCores: 4, physicalCores: null })
    expect(trainingIsaFlags(info.flags, 'arm64')).toMatchObject({ neon: true, avx2: false, fma: true })
  })

  it('counts NUMA node ranges', () => {
    expect(countRangeList('0')).toBe(1)
    expect(countRangeList('0-1')).toBe(2)
    expect(countRangeList('0,2-3')).toBe(3)
    expect(countRangeList(null)).toBe(0)
  })
})

describe('mounts and block devices', () => {
  it('keeps data filesystems once each and drops pseudo, system, snap and bind-mounted files', () => {
    const mounts = dataMounts(parseMountinfo(fixture('mountinfo/workstation-nvme-lvm.txt')))
    expect(mounts.map((mount) => mount.mountPoint)).toEqual([
      '/',
      '/data',
      '/media/user/My Passport',
      '/mnt/nas',
    ])
    expect(
      mountFor(
        mounts.map((m) => ({ mount: m.mountPoint })),
        '/data/sets/x',
      )?.mount,
    ).toBe('/data')
    expect(
      mountFor(
        mounts.map((m) => ({ mount: m.mountPoint })),
        '/home/me',
      )?.mount,
    ).toBe('/')
  })

  it('this CI machine: one ext4 root on the virtio disk', () => {
    const mounts = dataMounts(parseMountinfo(fixture('mountinfo/ci-vm-docker-virtio.txt')))
    expect(mounts.map((mount) => [mount.mountPoint, mount.fsType, mount.source])).toEqual([
      ['/', 'ext4', '/dev/vda'],
    ])
  })

  it('says "unknown" for virtual and USB disks whatever queue/rotational claims', () => {
    const base = { rotational: '1', removable: '0', vendor: null, model: null }
    expect(
      classifyBlockDevice({
        ...base,
        name: 'vda',
        sysPath: '/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda',
      }).kind,
    ).toBe('unknown')
    expect(
      classifyBlockDevice({
        ...base,
        name: 'sda',
        sysPath: '/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host0/target0:0:0/0:0:0:0/block/sda',
      }).kind,
    ).toBe('unknown')
    expect(
      classifyBlockDevice({
        ...base,
        name: 'sda',
        sysPath: '/sys/devices/pci0000:00/0000:00:10.0/host2/target2:0:0/2:0:0:0/block/sda',
        vendor: 'VMware',
        model: 'Virtual disk',
      }).kind,
    ).toBe('unknown')
    expect(
      classifyBlockDevice({
        ...base,
        name: 'nvme0n1',
        sysPath: '/sys/devices/pci0000:00/0000:00:06.0/nvme/nvme0/nvme0n1',
        model: 'Amazon Elastic Block Store',
      }).kind,
    ).toBe('unknown')
    expect(
      classifyBlockDevice({
        ...base,
        name: 'nvme0n1',
        sysPath: '/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1',
        model: 'Samsung SSD 980 PRO 2TB',
      }).kind,
    ).toBe('nvme')
    expect(
      classifyBlockDevice({
        ...base,
        name: 'sdb',
        rotational: '0',
        sysPath: '/sys/devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sdb',
        model: 'Samsung SSD 870',
      }).kind,
    ).toBe('ssd')
    expect(
      classifyBlockDevice({
        ...base,
        name: 'sdc',
        sysPath: '/sys/devices/pci0000:00/0000:00:17.0/ata4/host3/target3:0:0/3:0:0:0/block/sdc',
        model: 'WDC WD80EFZX',
      }).kind,
    ).toBe('hdd')
    expect(
      classifyBlockDevice({ ...base, name: 'zram0', sysPath: '/sys/devices/virtual/block/zram0' }).kind,
    ).toBe('zram')
  })

  it('follows partitions and device-mapper to the disk in a sysfs tree', async () => {
    const sys = await mkdtemp(join(tmpdir(), 'rigfit-sys-'))
    try {
      const disk = join(sys, 'devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1')
      await mkdir(join(disk, 'nvme0n1p2'), { recursive: true })
      await mkdir(join(disk, 'queue'), { recursive: true })
      await mkdir(join(disk, 'device'), { recursive: true })
      await writeFile(join(disk, 'nvme0n1p2/partition'), '2\n')
      await writeFile(join(disk, 'nvme0n1p2/dev'), '259:2\n')
      await writeFile(join(disk, 'queue/rotational'), '0\n')
      await writeFile(join(disk, 'device/model'), 'WD_BLACK SN850X 2000GB\n')
      const dm = join(sys, 'devices/virtual/block/dm-0')
      await mkdir(join(dm, 'slaves'), { recursive: true })
      await symlink(join(disk, 'nvme0n1p2'), join(dm, 'slaves/nvme0n1p2'))
      await mkdir(join(sys, 'dev/block'), { recursive: true })
      await symlink(join(disk, 'nvme0n1p2'), join(sys, 'dev/block/259:2'))
      await symlink(dm, join(sys, 'dev/block/253:0'))
      const facts = await resolveBlockDevice('253:0', sys)
      expect(facts).toMatchObject({ name: 'nvme0n1', rotational: '0', model: 'WD_BLACK SN850X 2000GB' })
      expect(classifyBlockDevice(facts as NonNullable<typeof facts>).kind).toBe('nvme')
      expect(await resolveBlockDevice('8:0', sys)).toBeNull()
    } finally {
      await rm(sys, { recursive: true, force: true })
    }
  })

  it('parses /proc/swaps and splits device numbers', () => {
    expect(
      parseProcSwaps(
        'Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 8388604 0 100\n/swap\\040file file 2097148 0 -2\n',
      ),
    ).toEqual([
      { filename: '/dev/zram0', type: 'partition', sizeBytes: 8388604 * 1024 },
      { filename: '/swap file', type: 'file', sizeBytes: 2097148 * 1024 },
    ])
    expect(majorMinor(0x10302)).toBe('259:2')
    expect(majorMinor(0x801)).toBe('8:1')
  })
})
