import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HardwareProfile, RigfitError } from '@rigfit/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildProfile } from '../src/build-profile.js'
import { collectProbes } from '../src/collect-probes.js'
import { applyOverrides, whatIfProfile } from '../src/overrides.js'
import { loadProfile, saveProfile } from '../src/profile-file.js'
import { formatProfileSummary } from '../src/summary.js'
import { bundledCatalog } from './helpers.js'

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
    expect(profile.overrides).toEqual(['gpu=GeForce RTX 3060 12GB (rtx-3060-12gb)', 'gpus=2'])
    expect(profile.interconnect.kind).toBe('unknown')
    expect(profile.notes.some((note) => note.startsWith('No GPU found'))).toBe(false)
    expect(profile.cpu).toEqual(detected.cpu)
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
    expect(profile.notes[0]).toMatch(/^Assumed host: 8 cores/)
    expect(profile.power.tdpBudgetWatts).toBe(8 * 700)
    expect(whatIfProfile({ gpu: 'RTX 4090' }, catalog, detected).host).toEqual(detected.host)
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
