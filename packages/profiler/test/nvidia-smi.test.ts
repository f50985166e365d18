import { describe, expect, it } from 'vitest'
import { nvidiaGpus } from '../src/gpu/nvidia.js'
import {
  NVIDIA_QUERY_FIELDS,
  nvidiaQueryArgs,
  parseNvidiaComputeCap,
  parseNvidiaCsvLine,
  parseNvidiaCudaVersion,
  parseNvidiaMigMode,
  parseNvidiaSmiCsv,
} from '../src/parsers/nvidia-smi.js'
import { fixture } from './helpers.js'

describe('nvidia-smi CSV', () => {
  it('parses one GPU (workstation with an RTX 4090)', () => {
    const { rows, problems } = parseNvidiaSmiCsv(fixture('nvidia-smi/workstation-rtx4090.csv'))
    expect(problems).toEqual([])
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      index: 0,
      name: 'NVIDIA GeForce RTX 4090',
      busId: '00000000:01:00.0',
      memoryTotalMiB: 24564,
      memoryFreeMiB: 23868,
      powerLimitW: 450,
      powerMaxLimitW: 600,
      pcieGen: 1,
      pcieGenMax: 4,
      pstate: 'P8',
    })
  })

  it('parses a real H100 80GB HBM3 (a cloud VM, driver 580, idle at P0)', () => {
    const { rows, problems } = parseNvidiaSmiCsv(fixture('nvidia-smi/cloud-h100-sxm5.csv'))
    expect(problems).toEqual([])
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      index: 0,
      name: 'NVIDIA H100 80GB HBM3',
      busId: '00000000:00:06.0',
      memoryTotalMiB: 81559,
      memoryFreeMiB: 81079,
      powerLimitW: 700,
      pcieGen: 5,
      pcieGenMax: 5,
      pstate: 'P0',
    })
    expect([...parseNvidiaComputeCap(fixture('nvidia-smi/cloud-h100-sxm5.compute_cap.csv'))]).toEqual([
      [0, '9.0'],
    ])
    expect(parseNvidiaCudaVersion(fixture('nvidia-smi/cloud-h100-sxm5.banner.txt'))).toBe('13.0')
  })

  it('parses two GPUs with different link widths', () => {
    const { rows } = parseNvidiaSmiCsv(fixture('nvidia-smi/dual-rtx3090-nvlink.csv'))
    expect(rows.map((row) => [row.index, row.pcieWidth])).toEqual([
      [0, 16],
      [1, 8],
    ])
  })

  it('parses eight GPUs and turns [N/A], [Not Supported] and [Unknown Error] into null', () => {
    const { rows, problems } = parseNvidiaSmiCsv(fixture('nvidia-smi/dgx-a100-80gb.csv'))
    expect(problems).toEqual([])
    expect(rows).toHaveLength(8)
    const lost = rows[5]
    expect(lost).toMatchObject({
      memoryTotalMiB: 81920,
      memoryFreeMiB: null,
      temperatureC: null,
      powerDrawW: null,
      pstate: null,
    })
    expect(rows[4]?.utilizationPercent).toBe(97)
    const laptop = parseNvidiaSmiCsv(fixture('nvidia-smi/laptop-gtx1650.csv')).rows[0]
    expect(laptop).toMatchObject({
      powerDrawW: null,
      powerLimitW: null,
      powerDefaultLimitW: null,
      memoryTotalMiB: 4096,
    })
  })

  it('keeps the complete rows of partial output and reports the cut line', () => {
    const { rows, problems } = parseNvidiaSmiCsv(fixture('nvidia-smi/dgx-h100-partial.csv'))
    expect(rows.map((row) => row.name)).toEqual(['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3'])
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/line 3: expected 22 fields, got 5/)
  })

  it('reports garbage instead of inventing a GPU', () => {
    const { rows, problems } = parseNvidiaSmiCsv(fixture('nvidia-smi/driver-not-loaded.txt'))
    expect(rows).toEqual([])
    expect(problems.length).toBeGreaterThan(0)
  })

  it('skips a header line when the query was made with one', () => {
    const header = `${NVIDIA_QUERY_FIELDS.join(', ')}\n`
    const { rows } = parseNvidiaSmiCsv(header + fixture('nvidia-smi/workstation-rtx4090.csv'))
    expect(rows).toHaveLength(1)
  })

  it('splits a CSV line into trimmed cells and builds the query arguments', () => {
    expect(parseNvidiaCsvLine('0, NVIDIA L4 , [N/A]')).toEqual(['0', 'NVIDIA L4', '[N/A]'])
    expect(nvidiaQueryArgs(['index', 'compute_cap'])).toEqual([
      '--query-gpu=index,compute_cap',
      '--format=csv,noheader,nounits',
    ])
    expect(NVIDIA_QUERY_FIELDS).not.toContain('compute_cap')
  })
})

describe('nvidia-smi side queries', () => {
  it('reads compute capability per GPU and ignores an old driver error text', () => {
    expect([...parseNvidiaComputeCap(fixture('nvidia-smi/dual-rtx3090-nvlink.compute_cap.csv'))]).toEqual([
      [0, '8.6'],
      [1, '8.6'],
    ])
    expect(
      parseNvidiaComputeCap(fixture('nvidia-smi/old-driver-tesla-v100.compute_cap.stderr.txt')).size,
    ).toBe(0)
  })

  it('reads MIG modes; [N/A] means the GPU has no MIG', () => {
    const modes = parseNvidiaMigMode(fixture('nvidia-smi/dgx-a100-80gb.mig.csv'))
    expect(modes.get(0)).toBe('disabled')
    expect(modes.get(7)).toBe('enabled')
    expect(parseNvidiaMigMode(fixture('nvidia-smi/workstation-rtx4090.mig.csv')).size).toBe(0)
  })

  it('reads the CUDA version from the banner and from -q output', () => {
    expect(parseNvidiaCudaVersion(fixture('nvidia-smi/workstation-rtx4090.banner.txt'))).toBe('12.4')
    expect(parseNvidiaCudaVersion(fixture('nvidia-smi/dgx-a100-80gb.q-compute.txt'))).toBe('12.2')
    expect(parseNvidiaCudaVersion('no banner here')).toBeNull()
  })
})

describe('NVIDIA GPU records', () => {
  const dgx = () => ({
    rows: parseNvidiaSmiCsv(fixture('nvidia-smi/dgx-a100-80gb.csv')).rows,
    computeCaps: parseNvidiaComputeCap(fixture('nvidia-smi/dgx-a100-80gb.compute_cap.csv')),
    migModes: parseNvidiaMigMode(fixture('nvidia-smi/dgx-a100-80gb.mig.csv')),
    cudaVersion: '12.2',
    topo: null,
  })

  it('derives precision support from compute capability', () => {
    const [gpu] = nvidiaGpus(dgx())
    expect(gpu).toMatchObject({
      vramTotalBytes: 81920 * 1024 ** 2,
      computeCapability: '8.0',
      tensorCores: true,
      bf16: 'yes',
      tf32: 'yes',
      fp8: 'no',
      family: 'datacenter',
      migMode: 'disabled',
      tdpWatts: 400,
      detectedBy: 'nvidia-smi',
    })
  })

  it('leaves precision unknown when the driver does not tell compute capability', () => {
    const rows = parseNvidiaSmiCsv(fixture('nvidia-smi/old-driver-tesla-v100.csv')).rows
    const [gpu] = nvidiaGpus({ rows, computeCaps: new Map(), migModes: null, cudaVersion: null, topo: null })
    expect(gpu).toMatchObject({
      computeCapability: null,
      bf16: 'unknown',
      tensorCores: null,
      migMode: 'unknown',
      name: 'Tesla V100-SXM2-16GB',
    })
  })

  it('knows a GTX 1650 (Turing) has no tensor cores', () => {
    const rows = parseNvidiaSmiCsv(fixture('nvidia-smi/laptop-gtx1650.csv')).rows
    const [gpu] = nvidiaGpus({
      rows,
      computeCaps: parseNvidiaComputeCap(fixture('nvidia-smi/laptop-gtx1650.compute_cap.csv')),
      migModes: new Map(),
      cudaVersion: null,
      topo: null,
    })
    expect(gpu).toMatchObject({
      tensorCores: false,
      fp16: 'yes',
      bf16: 'emulated',
      migMode: 'unsupported',
      powerLimitWatts: null,
    })
  })
})
