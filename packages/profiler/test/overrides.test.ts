import { readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { HardwareProfile, RigfitError } from '@rigfit/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildProfile } from '../src/build-profile.js'
import { collectProbes } from '../src/collect-probes.js'
import { applyOverrides } from '../src/overrides.js'
import { loadProfile, saveProfile } from '../src/profile-file.js'
import { formatProfileSummary } from '../src/summary.js'
import { assumedCpuCount, assumedRamGiB } from '../src/what-if-host.js'
import { whatIfProfile } from '../src/what-if-profile.js'
import { bundledCatalog } from './helpers.js'

const require = createRequire(import.meta.url)
/** A recorded machine profile shared by the workspace's tests (packages/core/test/fixtures/machines). */
function fixtureMachine(file: string): HardwareProfile {
  const root = dirname(require.resolve('@rigfit/core/package.json'))
  return HardwareProfile.parse(
    JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'machines', file), 'utf8')),
  )
}

const GIB = 1024 ** 3
const catalog = bundledCatalog()
let detected: HardwareProfile
let dir: string

beforeAll(async () => {
  detected = buildProfile(await collectProbes({ env: { ...process.env, PATH: '/usr/bin:/bin' } }), {
    catalog,
  })
  dir = await mkdtemp(join(tmpdir(), 'rigfit-profile-file-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function rigfitError(promise: Promise<unknown> | (() => unknown)): Promise<RigfitError> {
  try {
    await (typeof promise === 'function' ? promise() : promise)
  } catch (error) {
    if (error instanceof RigfitError) return error
    throw error
  }
  throw new Error('expected a RigfitError')
}

describe('what-if overrides', () => {
  it('--gpu "RTX 3060 12GB" --gpus 2 puts two catalog GPUs in the profile and records it', () => {
    const profile = applyOverrides(detected, { gpu: 'RTX 3060 12GB', gpus: 2 }, catalog)
    expect(profile.source).toBe('what-if')
    expect(
      profile.gpus.map((gpu) => [gpu.index, gpu.name, gpu.vramTotalBytes, gpu.catalog?.matchedBy]),
    ).toEqual([
      [0, 'GeForce RTX 3060 12GB', 12 * GIB, 'override'],
      [1, 'GeForce RTX 3060 12GB', 12 * GIB, 'override'],
    ])
    expect(profile.gpus[0]).toMatchObject({
      family: 'rtx30',
      computeCapability: '8.6',
      bf16: 'yes',
      detectedBy: 'catalog',
    })
    expect(profile.overrides).toEqual([
      'gpu=GeForce RTX 3060 12GB (rtx-3060-12gb)',
      'gpus=2',
      'ram=64GiB (assumed)',
      'cpus=24 (assumed)',
    ])
    // The planned node's RAM is its own (twice the GPUs' memory, at least 32 GiB), never this machine's.
    expect(profile.memory.totalBytes).toBe(64 * GIB)
    expect(assumedRamGiB(profile)).toBe(64)
    expect(profile.storage).toEqual([])
    expect(profile.interconnect.kind).toBe('pcie')
    expect(profile.notes.some((note) => note.startsWith('No GPU found'))).toBe(false)
  })

  it('--vram and --ram correct detection; memory figures stay consistent', () => {
    const withGpu = applyOverrides(detected, { gpu: 'NVIDIA A100-SXM4-80GB', vramGiB: 40 }, catalog)
    expect(withGpu.gpus[0]?.catalog?.id).toBe('a100-80gb-sxm4')
    expect(withGpu.gpus[0]).toMatchObject({
      vramTotalBytes: 40 * GIB,
      vramUsableBytes: 40 * GIB,
      vramFreeBytes: null,
    })
    const ram = applyOverrides(detected, { ramGiB: 128 }, catalog)
    expect(ram.memory).toMatchObject({
      totalBytes: 128 * GIB,
      osReserveBytes: 4 * GIB,
      usableBytes: 124 * GIB,
      limitedBy: 'host',
    })
    expect(ram.overrides).toEqual(['ram=128GiB'])
    // Without a size in the name, --vram tells the variants apart.
    expect(applyOverrides(detected, { gpu: 'A100 SXM4', vramGiB: 40 }, catalog).gpus[0]?.catalog?.id).toBe(
      'a100-40gb-sxm4',
    )
  })

  it('refuses what cannot be applied, with a suggestion', async () => {
    const unknown = await rigfitError(() => applyOverrides(detected, { gpu: 'RTX 9999 Hyper' }, catalog))
    expect(unknown).toMatchObject({ code: 'E_UNKNOWN_GPU', kind: 'input' })
    expect(unknown.suggestion).toMatch(/Did you mean/)
    const negative = await rigfitError(() => applyOverrides(detected, { vramGiB: -4 }, catalog))
    expect(negative).toMatchObject({ code: 'E_OVERRIDE', kind: 'usage' })
    const fraction = await rigfitError(() =>
      applyOverrides(detected, { gpu: 'RTX 4090', gpus: 1.5 }, catalog),
    )
    expect(fraction.message).toMatch(/--gpus must be a positive whole number/)
    if (detected.gpus.length === 0) {
      expect((await rigfitError(() => applyOverrides(detected, { gpus: 2 }, catalog))).suggestion).toMatch(
        /--gpu/,
      )
      expect((await rigfitError(() => applyOverrides(detected, { vramGiB: 8 }, catalog))).message).toMatch(
        /has none/,
      )
    }
  })

  it('whatIfProfile describes hardware without a machine and states the assumed host', () => {
    const profile = whatIfProfile({ gpu: 'H100 SXM5 80GB', gpus: 8 }, catalog)
    expect(HardwareProfile.parse(profile).gpus).toHaveLength(8)
    expect(profile.memory.totalBytes).toBe(2048 * GIB)
    expect(assumedRamGiB(profile)).toBe(2048)
    expect(profile.notes.some((note) => /RAM of the planned node assumed.*2048 GiB/.test(note))).toBe(true)
    expect(assumedRamGiB(whatIfProfile({ gpu: 'H100 SXM5 80GB', ramGiB: 512 }, catalog))).toBeNull()
    expect(profile.cpu).toMatchObject({ logicalCores: 96, physicalCores: 48, usableCores: 96 })
    expect(assumedCpuCount(profile)).toBe(96)
    expect(profile.interconnect.kind).toBe('nvlink')
    expect(profile.power.tdpBudgetWatts).toBe(8 * 700)
    // The OS is this machine's (the likeliest stack), but not its container limits.
    expect(whatIfProfile({ gpu: 'RTX 4090' }, catalog, detected).host).toEqual({
      ...detected.host,
      container: { detected: false, memoryLimitBytes: null, cpuQuotaCores: null, cgroupVersion: null },
    })
    const cpuOnly = whatIfProfile({ ramGiB: 64 }, catalog)
    expect(cpuOnly.cpu).toMatchObject({ logicalCores: 16, physicalCores: 8 })
    expect(assumedCpuCount(cpuOnly)).toBe(16)
  })
})

const nonApple = catalog.filter((entry) => entry.vendor !== 'apple')
const apple = catalog.filter((entry) => entry.vendor === 'apple')

describe('the node around what-if GPUs', () => {
  it.each([
    ['H100', 8, 'nvlink'],
    ['A100 80GB', 4, 'nvlink'],
    ['NVIDIA A100-SXM4-40GB', 8, 'nvlink'],
    ['Tesla V100-SXM2-16GB', 4, 'nvlink'],
    ['B200', 8, 'nvlink'],
    ['MI300X', 8, 'xgmi'],
    ['H100 PCIe', 2, 'pcie'],
    ['A100 80GB PCIe', 4, 'pcie'],
    ['RTX 4090', 2, 'pcie'],
    ['H100', 1, 'none'],
  ])('--gpu %j --gpus %i is linked by %s, from the catalog entry', (name, gpus, kind) => {
    expect(applyOverrides(detected, { gpu: name, gpus }, catalog).interconnect.kind).toBe(kind)
  })

  it('every catalog GPU: SXM parts get NVLink, PCIe cards never do, one GPU has no link', () => {
    for (const entry of nonApple) {
      for (const gpus of [1, 2, 4, 8]) {
        const { kind } = applyOverrides(detected, { gpu: entry, gpus }, catalog).interconnect
        const label = `${entry.name} x${gpus}`
        if (gpus === 1) expect(kind, label).toBe('none')
        else if (/SXM/.test(entry.name)) expect(kind, label).toBe('nvlink')
        else if (/PCIe|RTX|Radeon/.test(entry.name)) expect(kind, label).toBe('pcie')
        else expect(['nvlink', 'xgmi', 'pcie'], label).toContain(kind)
      }
    }
  })

  it('every catalog GPU x {1, 2, 4, 8}: the CPU is the planned node, never this machine, and says it was assumed', () => {
    for (const entry of nonApple) {
      for (const gpus of [1, 2, 4, 8]) {
        const profile = applyOverrides(detected, { gpu: entry, gpus }, catalog)
        const expected = Math.max(16, 12 * gpus)
        expect(profile.cpu, `${entry.name} x${gpus}`).toMatchObject({
          logicalCores: expected,
          physicalCores: expected / 2,
          usableCores: expected,
          brand: 'unknown (planned node)',
        })
        expect(assumedCpuCount(profile)).toBe(expected)
        expect(profile.notes.join('\n')).toMatch(/CPU of the planned node assumed.*--cpus N/)
      }
    }
  })

  it('--cpus N gives the planned node its CPU count, on what-if GPUs and on this machine', () => {
    const node = applyOverrides(detected, { gpu: 'H100', gpus: 8, cpus: 192 }, catalog)
    expect(node.cpu).toMatchObject({ logicalCores: 192, physicalCores: 96, usableCores: 192 })
    expect(assumedCpuCount(node)).toBeNull()
    expect(node.overrides).toContain('cpus=192')
    const preset = applyOverrides(detected, { gpu: 'H100', gpus: 8, cpus: 96, physicalCores: 96 }, catalog)
    expect(preset.cpu).toMatchObject({ logicalCores: 96, physicalCores: 96 })
    const here = applyOverrides(detected, { cpus: 64 }, catalog)
    expect(here.cpu).toMatchObject({ logicalCores: 64, usableCores: 64, brand: detected.cpu.brand })
    expect(here.gpus).toEqual(detected.gpus)
  })

  it('--gpus N of a detected GPU: a new count is a what-if node (catalog link, assumed CPU); the same count is not', () => {
    const box = fixtureMachine('workstation-2x-rtx3090.json')
    const same = applyOverrides(box, { gpus: 2 }, catalog)
    expect(same.cpu).toEqual(box.cpu)
    expect(same.interconnect).toEqual(box.interconnect)
    const four = applyOverrides(box, { gpus: 4 }, catalog)
    expect(four.cpu.logicalCores).toBe(48)
    expect(four.interconnect.kind).toBe('pcie')
  })

  it('refuses --cpus that is not a whole positive number', async () => {
    for (const cpus of [0, -8, 2.5]) {
      const error = await rigfitError(() => applyOverrides(detected, { cpus }, catalog))
      expect(error).toMatchObject({ code: 'E_OVERRIDE', kind: 'usage' })
      expect(error.message).toMatch(/--cpus must be a positive whole number/)
    }
  })
})

describe('a what-if Mac', () => {
  it('every Apple chip: RAM is the unified memory, the GPU gets the Metal working set of it, the Mac is the host', () => {
    for (const entry of apple) {
      for (const ramGiB of [undefined, 8, 16, 64]) {
        const profile = applyOverrides(
          detected,
          { gpu: entry, ...(ramGiB === undefined ? {} : { ramGiB }) },
          catalog,
        )
        const ram = (ramGiB ?? entry.vramGB) * GIB
        const gpu = profile.gpus[0]
        const label = `${entry.name}, ${ramGiB ?? 'default'} GiB`
        expect(profile.memory.totalBytes, label).toBe(ram)
        expect(gpu?.vramUsableBytes, label).toBe(Math.floor(ram * (ram <= 36 * GIB ? 2 / 3 : 3 / 4)))
        expect(gpu?.vramUsableBytes, label).toBeLessThan(profile.memory.totalBytes)
        expect(gpu?.catalog?.id, label).toBe(entry.id)
        expect(profile.host).toMatchObject({ platform: 'darwin', arch: 'arm64' })
        expect(profile.host.container.detected).toBe(false)
        expect(profile.acceleration).toMatchObject({ mps: true, metal: true, cuda: null })
        expect(profile.cpu.vendor).toBe('apple')
        expect(profile.cpu.logicalCores, label).toBe(profile.cpu.physicalCores)
        expect(profile.cpu.logicalCores, label).toBeGreaterThanOrEqual(8)
        expect(assumedCpuCount(profile)).toBeNull()
      }
    }
  })

  it('"Apple M2" alone is a 24 GiB M2 Mac with a 16 GiB working set, not 24 GiB of GPU memory', () => {
    const m2 = applyOverrides(detected, { gpu: 'Apple M2' }, catalog)
    expect(m2.gpus[0]?.catalog?.id).toBe('m2-10c')
    expect(m2.gpus[0]?.vramUsableBytes).toBe(16 * GIB)
    expect(m2.cpu).toMatchObject({ logicalCores: 8, brand: 'Apple M2 CPU' })
    expect(m2.notes.join('\n')).toMatch(/working set, 16\.0 GiB \(2\/3 of RAM/)
    const small = whatIfProfile({ gpu: 'Apple M2', ramGiB: 16 }, catalog)
    expect(small.memory.totalBytes).toBe(16 * GIB)
    expect(small.gpus[0]?.vramUsableBytes).toBe(Math.floor((16 * GIB * 2) / 3))
  })

  it('refuses several Apple GPUs in one machine, named or copied from a detected Mac', async () => {
    const error = await rigfitError(() => applyOverrides(detected, { gpu: 'Apple M2', gpus: 2 }, catalog))
    expect(error).toMatchObject({ code: 'E_OVERRIDE', kind: 'usage' })
    // Several Macs cannot train one model either (mps has no distributed backend), so --nodes is no way out.
    expect(error.suggestion).toMatch(/no distributed backend/)
    expect(error.suggestion).not.toMatch(/--nodes/)
    const mac = fixtureMachine('macbook-m2-16gb.json')
    const copied = await rigfitError(() => applyOverrides(mac, { gpus: 2 }, catalog))
    expect(copied).toMatchObject({ code: 'E_OVERRIDE', kind: 'usage' })
    // The Mac it runs on keeps its own RAM and working set when nothing about its GPU changes.
    expect(applyOverrides(mac, { cpus: 8 }, catalog).gpus).toEqual(mac.gpus)
  })
})

describe('saving and loading profiles', () => {
  it('round-trips a profile, marking it as loaded from a file', async () => {
    const path = join(dir, 'round-trip.json')
    await saveProfile(path, detected)
    const loaded = await loadProfile(path)
    expect(loaded).toEqual({ ...detected, source: 'file' })
  })

  it('never overwrites without force, and replaces with it', async () => {
    const path = join(dir, 'kept.json')
    await writeFile(path, 'precious')
    const error = await rigfitError(saveProfile(path, detected))
    expect(error).toMatchObject({ code: 'E_EXISTS', kind: 'exists' })
    expect(await readFile(path, 'utf8')).toBe('precious')
    await saveProfile(path, detected, { force: true })
    expect(JSON.parse(await readFile(path, 'utf8')).schemaVersion).toBe(1)
  })

  it('names the file and the field when a profile is invalid', async () => {
    const path = join(dir, 'broken.json')
    const broken = JSON.parse(JSON.stringify(detected))
    broken.memory.totalBytes = 'lots'
    await writeFile(path, JSON.stringify(broken))
    const error = await rigfitError(loadProfile(path))
    expect(error).toMatchObject({ code: 'E_PROFILE_INVALID', kind: 'validation' })
    expect(error.message).toContain(path)
    expect(error.message).toContain('memory.totalBytes')
    await writeFile(path, '{ not json')
    expect(await rigfitError(loadProfile(path))).toMatchObject({ code: 'E_PROFILE_JSON' })
    await writeFile(path, JSON.stringify({ ...detected, schemaVersion: 99 }))
    expect((await rigfitError(loadProfile(path))).message).toMatch(/schemaVersion 99 is not supported/)
    expect(await rigfitError(loadProfile(join(dir, 'missing.json')))).toMatchObject({
      code: 'E_PROFILE_READ',
      kind: 'io',
    })
  })
})

describe('human summary', () => {
  it('shows each GPU with memory, capability and number formats, and the failed probes', () => {
    const profile = applyOverrides(detected, { gpu: 'RTX 4090' }, catalog)
    profile.probes = [
      ...profile.probes,
      { name: 'rocm-smi', ok: false, ms: 2000, error: 'timed out after 2000 ms' },
    ]
    const text = formatProfileSummary(profile)
    expect(text).toMatch(
      /GPU 0 +GeForce RTX 4090 · 24\.0 GiB VRAM · compute 8\.9 · tensor cores · FP16 yes BF16 yes TF32 yes FP8 yes/,
    )
    expect(text).toMatch(/✗ rocm-smi \(2000 ms\): timed out after 2000 ms/)
    expect(text).toMatch(/\[what-if: gpu=GeForce RTX 4090/)
  })
})
