import { rm } from 'node:fs/promises'
import { HardwareProfile } from '@rigfit/core'
import { afterEach, describe, expect, it } from 'vitest'
import { buildProfile } from '../src/build-profile.js'
import { collectProbes } from '../src/collect-probes.js'
import { fakeBin, nvidiaSmiReplaying, pathWith, recordedPids, survivorsOf } from './fake-tools.js'
import { bundledCatalog, fixturePath } from './helpers.js'

/** Far beyond what an answering fake tool needs, even on a loaded machine. */
const TIMEOUT_MS = 10_000
/** For the hanging tool, whose every probe waits out its deadline. */
const HANG_TIMEOUT_MS = 600
const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

async function profileWith(tools: Record<string, string>, timeoutMs = TIMEOUT_MS) {
  const dir = await fakeBin(tools)
  dirs.push(dir)
  const collection = await collectProbes({ env: pathWith(dir), timeoutMs })
  const profile = buildProfile(collection, { catalog: bundledCatalog() })
  expect(() => HardwareProfile.parse(profile)).not.toThrow()
  return { dir, collection, profile, probe: (name: string) => profile.probes.find((p) => p.name === name) }
}

describe.runIf(process.platform !== 'win32')('nvidia-smi fault injection', () => {
  it('finds NVIDIA GPUs from nvidia-smi alone, without lspci, with NVLink topology', async () => {
    const { profile, probe } = await profileWith({
      'nvidia-smi': nvidiaSmiReplaying({
        csv: fixturePath('nvidia-smi/dual-rtx3090-nvlink.csv'),
        computeCap: fixturePath('nvidia-smi/dual-rtx3090-nvlink.compute_cap.csv'),
        mig: fixturePath('nvidia-smi/workstation-rtx4090.mig.csv'),
        topo: fixturePath('nvidia-topo/dual-rtx3090-nvlink.txt'),
        banner: fixturePath('nvidia-smi/workstation-rtx4090.banner.txt'),
      }),
    })
    expect(probe('nvidia-smi')).toMatchObject({ ok: true })
    expect(
      profile.gpus.map((gpu) => [gpu.name, gpu.computeCapability, gpu.catalog?.id, gpu.migMode]),
    ).toEqual([
      ['NVIDIA GeForce RTX 3090', '8.6', 'rtx-3090', 'unsupported'],
      ['NVIDIA GeForce RTX 3090', '8.6', 'rtx-3090', 'unsupported'],
    ])
    expect(profile.gpus[0]).toMatchObject({
      family: 'rtx30',
      bf16: 'yes',
      tf32: 'yes',
      fp8: 'no',
      memoryBandwidthGBs: expect.any(Number),
    })
    expect(profile.interconnect).toMatchObject({ kind: 'nvlink', links: [{ a: 0, b: 1, kind: 'nvlink' }] })
    expect(profile.acceleration.cuda).toBe('12.4')
    expect(profile.power.tdpBudgetWatts).toBeGreaterThanOrEqual(700)
    expect(profile.notes.some((note) => note.startsWith('No GPU found'))).toBe(false)
  })

  // Real sessions recorded on cloud VMs: each Hopper part is matched to its catalog entry with its precisions.
  for (const [machine, name, catalogId] of [
    ['cloud-h100-sxm5', 'NVIDIA H100 80GB HBM3', 'h100-sxm5-80gb'],
    ['cloud-h200', 'NVIDIA H200', 'h200-sxm-141gb'],
  ] as const) {
    it(`profiles a real ${name} session (${machine}): its catalog entry, Hopper precisions, CUDA 13.0`, async () => {
      const { profile, probe } = await profileWith({
        'nvidia-smi': nvidiaSmiReplaying({
          csv: fixturePath(`nvidia-smi/${machine}.csv`),
          computeCap: fixturePath(`nvidia-smi/${machine}.compute_cap.csv`),
          mig: fixturePath(`nvidia-smi/${machine}.mig.csv`),
          topo: fixturePath(`nvidia-topo/${machine}.txt`),
          banner: fixturePath(`nvidia-smi/${machine}.banner.txt`),
        }),
      })
      expect(probe('nvidia-smi')).toMatchObject({ ok: true })
      expect(
        profile.gpus.map((gpu) => [gpu.name, gpu.computeCapability, gpu.catalog?.id, gpu.migMode]),
      ).toEqual([[name, '9.0', catalogId, 'disabled']])
      expect(profile.gpus[0]).toMatchObject({ family: 'datacenter', bf16: 'yes', tf32: 'yes', fp8: 'yes' })
      expect(profile.acceleration.cuda).toBe('13.0')
      expect(profile.interconnect.links).toEqual([])
    })
  }

  it('missing: records nvidia-smi as absent and says no GPU was found', async () => {
    const { profile, probe } = await profileWith({})
    expect(probe('nvidia-smi')).toMatchObject({
      ok: false,
      absent: true,
      error: 'nvidia-smi not found on PATH',
    })
    expect(profile.gpus.filter((gpu) => gpu.vendor === 'nvidia')).toEqual([])
  })

  it('hanging: the profile completes, the probe says it timed out, and the tool and its children are killed', async () => {
    const { profile, probe, dir } = await profileWith(
      { 'nvidia-smi': `sleep 300 &\necho $! >> "$(dirname "$0")/pids"\nwait` },
      HANG_TIMEOUT_MS,
    )
    expect(probe('nvidia-smi')).toMatchObject({
      ok: false,
      error: expect.stringContaining(`timed out after ${HANG_TIMEOUT_MS} ms`),
    })
    expect(probe('nvidia-smi topo')).toMatchObject({
      ok: false,
      error: expect.stringContaining(`timed out after ${HANG_TIMEOUT_MS} ms`),
    })
    expect(profile.gpus.filter((gpu) => gpu.vendor === 'nvidia')).toEqual([])
    const pids = await recordedPids(dir)
    expect(pids.length).toBeGreaterThan(0)
    expect(await survivorsOf(pids)).toEqual([])
  })

  it('exit code 2: the error names the exit code and the message', async () => {
    const { probe, profile } = await profileWith({
      'nvidia-smi': `cat '${fixturePath('nvidia-smi/driver-not-loaded.txt')}' >&2\nexit 2`,
    })
    expect(probe('nvidia-smi')?.ok).toBe(false)
    expect(probe('nvidia-smi')?.error).toMatch(/exit code 2: NVIDIA-SMI has failed/)
    expect(profile.gpus.filter((gpu) => gpu.vendor === 'nvidia')).toEqual([])
  })

  it('garbage on exit 0: no GPU is invented', async () => {
    const { probe, profile } = await profileWith({
      'nvidia-smi': 'echo "%%%% \\001\\002 not csv at all"\necho "x"',
    })
    expect(probe('nvidia-smi')).toMatchObject({ ok: false, error: expect.stringMatching(/no GPU rows/) })
    expect(profile.gpus.filter((gpu) => gpu.vendor === 'nvidia')).toEqual([])
  })

  it('partial output: the complete rows are used and the probe is marked degraded', async () => {
    const { probe, profile } = await profileWith({
      'nvidia-smi': nvidiaSmiReplaying({ csv: fixturePath('nvidia-smi/dgx-h100-partial.csv') }),
    })
    expect(probe('nvidia-smi')).toMatchObject({ ok: false, error: expect.stringMatching(/^partial output/) })
    expect(profile.gpus.map((gpu) => gpu.catalog?.id)).toEqual(['h100-sxm5-80gb', 'h100-sxm5-80gb'])
  })

  it('an old driver that rejects compute_cap still gives its GPUs, with compute capability from the catalog', async () => {
    const reject = (field: string) => `echo 'Field "${field}" is not a valid field to query.' >&2; exit 2`
    const { probe, profile } = await profileWith({
      'nvidia-smi': [
        'case "$*" in',
        `  *compute_cap*) ${reject('compute_cap')} ;;`,
        `  *mig.mode.current*) ${reject('mig.mode.current')} ;;`,
        `  --query-gpu=*) cat '${fixturePath('nvidia-smi/old-driver-tesla-v100.csv')}' ;;`,
        '  *) exit 0 ;;',
        'esac',
      ].join('\n'),
    })
    expect(probe('nvidia-smi')).toMatchObject({ ok: true })
    expect(probe('nvidia-smi compute_cap')?.error).toMatch(/compute_cap" is not a valid field/)
    expect(profile.gpus[0]).toMatchObject({
      name: 'Tesla V100-SXM2-16GB',
      computeCapability: '7.0',
      catalog: { id: 'v100-sxm2-16gb', matchedBy: 'exact' },
      tensorCores: true,
      migMode: 'unknown',
    })
    expect(
      profile.notes.some((note) =>
        /does not report compute capability; it was taken from the GPU catalog/.test(note),
      ),
    ).toBe(true)
  })
})
