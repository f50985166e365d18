import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { matchGpu } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { bundledCatalogEntries } from './helpers/bundled-plugins.js'

const MIB = 1024 ** 2
const GIB = 1024 ** 3
const repo = fileURLToPath(new URL('../../..', import.meta.url))
const entries = bundledCatalogEntries()

describe('the bundled GPU catalogs', () => {
  it.each([
    ['NVIDIA A100-SXM4-80GB', 81920 * MIB, 'a100-80gb-sxm4'],
    ['NVIDIA A100-SXM4-40GB', 40536 * MIB, 'a100-40gb-sxm4'],
    ['NVIDIA A100 80GB PCIe', 81920 * MIB, 'a100-80gb-pcie'],
    ['Tesla V100-SXM2-16GB', 16160 * MIB, 'v100-sxm2-16gb'],
    ['Tesla T4', 15360 * MIB, 't4'],
    ['NVIDIA GeForce RTX 4090', 24564 * MIB, 'rtx-4090'],
    ['GeForce RTX 2080', 8192 * MIB, 'rtx-2080'],
    ['NVIDIA H100 80GB HBM3', 81559 * MIB, 'h100-sxm5-80gb'],
    ['NVIDIA H100 PCIe', 81559 * MIB, 'h100-pcie-80gb'],
    ['NVIDIA RTX 6000 Ada Generation', 49140 * MIB, 'rtx-6000-ada'],
    ['NVIDIA L40S', 46068 * MIB, 'l40s'],
    ['NVIDIA A10G', 23028 * MIB, 'a10g'],
    ['NVIDIA GeForce RTX 4060 Ti', 16380 * MIB, 'rtx-4060-ti-16gb'],
    ['NVIDIA GeForce RTX 4060 Ti', 8188 * MIB, 'rtx-4060-ti-8gb'],
    ['A100 80GB', null, 'a100-80gb-sxm4'],
    ['RTX 3060 12GB', null, 'rtx-3060-12gb'],
    ['4090', null, 'rtx-4090'],
    ['H100', null, 'h100-sxm5-80gb'],
    ['Radeon RX 7900 XTX', 24 * GIB, 'rx-7900-xtx'],
    ['AMD Instinct MI210', 64 * GIB, 'mi210'],
    ['AMD Radeon PRO W7900', 48 * GIB, 'pro-w7900'],
    ['Apple M2', 16 * GIB, 'm2-10c'],
    ['Apple M3 Max', 128 * GIB, 'm3-max-40c'],
    ['Apple M3 Max (30-core GPU)', 36 * GIB, 'm3-max-30c'],
    ['NVIDIA GeForce RTX 5090', 32607 * MIB, 'rtx-5090'],
    ['NVIDIA GeForce RTX 5060 Ti', 16311 * MIB, 'rtx-5060-ti-16gb'],
    ['RTX 5070 Ti', null, 'rtx-5070-ti'],
    ['RTX 4080 SUPER', null, 'rtx-4080-super'],
    ['RTX 4080', null, 'rtx-4080'],
    ['NVIDIA RTX PRO 6000 Blackwell Workstation Edition', 97887 * MIB, 'rtx-pro-6000-blackwell'],
    ['NVIDIA GB200', 189471 * MIB, 'gb200'],
    ['AMD Instinct MI325X', 256 * GIB, 'mi325x'],
    ['AMD Radeon RX 9070 XT', 16 * GIB, 'rx-9070-xt'],
    ['Intel(R) Arc(TM) B580 Graphics', 12 * GIB, 'arc-b580'],
    ['Intel(R) Arc(TM) A770 Graphics', 16 * GIB, 'arc-a770-16gb'],
    ['B580', null, 'arc-b580'],
    ['Arc A770', null, 'arc-a770-16gb'],
  ])('%s (%s bytes) is %s', (name, vram, id) => {
    expect(matchGpu(name, vram, entries)?.entry.id).toBe(id)
  })

  it('has unique ids across plugins', () => {
    const ids = entries.map((entry) => entry.id)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('are current with the GPU spec sheet (scripts/data/gpu-specs.csv)', () => {
    const result = spawnSync(process.execPath, [join(repo, 'scripts/build-gpu-catalogs.mjs'), '--check'], {
      encoding: 'utf8',
    })
    expect(result.stderr).toBe('')
    expect(result.stdout).toMatch(/GPU catalogs are current/)
    expect(result.status).toBe(0)
  })

  it('carry a list price only where the price sheet gives one, with its page and the day it was seen', () => {
    const sheet = readFileSync(join(repo, 'scripts/data/gpu-prices.csv'), 'utf8').trim().split('\n').slice(1)
    const priced = entries.filter((entry) => entry.listPrice)
    expect(priced.map((entry) => entry.id).sort()).toEqual(sheet.map((line) => line.split(',')[0]).sort())
    for (const { id, listPrice } of priced) {
      expect(listPrice?.source, id).toMatch(/^https:\/\//)
      expect(listPrice?.seen, id).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    }
  })

  it('refuses a price for a GPU the spec sheet does not have', () => {
    const prices = join(mkdtempSync(join(tmpdir(), 'rigfit-gpu-prices-')), 'gpu-prices.csv')
    writeFileSync(
      prices,
      'gpu_id,usd_per_gpu_hour,provider,offer,source,seen,via\nrtx-9999,1.5,Nobody,1x RTX 9999,https://example.com/p,2026-11-01,\n',
    )
    const result = spawnSync(
      process.execPath,
      [join(repo, 'scripts/build-gpu-catalogs.mjs'), '--check', '--prices', prices],
      { encoding: 'utf8' },
    )
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('prices GPUs the spec sheet lacks: rtx-9999')
  })

  it('--check names the catalog a changed spec-sheet row makes stale', () => {
    const sheet = readFileSync(join(repo, 'scripts/data/gpu-specs.csv'), 'utf8')
    const row = sheet.split('\n').find((line) => line.includes(',GeForce RTX 4090,'))
    expect(row).toBeDefined()
    // The TDP column (the one before the source) of the RTX 4090 row goes from 450 W to 451 W.
    const changed = sheet.replace(row as string, (row as string).replace(/,450,/, ',451,'))
    expect(changed).not.toBe(sheet)
    const csv = join(mkdtempSync(join(tmpdir(), 'rigfit-gpu-specs-')), 'gpu-specs.csv')
    writeFileSync(csv, changed)
    const result = spawnSync(
      process.execPath,
      [join(repo, 'scripts/build-gpu-catalogs.mjs'), '--check', '--csv', csv],
      { encoding: 'utf8' },
    )
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(join('plugins', 'rtx40', 'catalog.json'))
    expect(result.stderr).not.toContain(join('plugins', 'rtx30', 'catalog.json'))
  })
})
