import { amdPrecision, familyOf, type Gpu } from '@rigfit/core'
import type { PciGpu } from '../linux/pci-gpus.js'
import { parseAmdSmi } from '../parsers/amd-smi.js'
import { normalizeBusId } from '../parsers/bus-id.js'
import { type AmdGpuRow, parseRocmSmiJson, ROCM_SMI_READING_ARGS } from '../parsers/rocm-smi.js'
import { type ProbeContext, requireSuccess } from '../probe-runner.js'
import { gpuRecord } from './gpu-record.js'

/** gfx targets of AMD APUs (Raven, Renoir/Cezanne, Rembrandt, Raphael, Phoenix, Strix): integrated GPUs. */
const APU_TARGETS = /^gfx(90[29c]|103[5-7]|110[3]|115[0-2])$/

const ROCM_SMI_ARGS = [...ROCM_SMI_READING_ARGS, '--showbus', '--showdriverversion', '--json']

export interface AmdProbeData {
  rows: AmdGpuRow[]
  source: 'amd-smi' | 'rocm-smi'
}

/** amd-smi (the current tool) and rocm-smi (older ROCm) in parallel; amd-smi's answer wins when both work. */
export async function probeAmd(ctx: ProbeContext): Promise<AmdProbeData | null> {
  const [amdSmi, rocmSmi] = await Promise.all([
    ctx.probe('amd-smi', async (handle) => {
      const [staticRun, metricRun] = await Promise.all([
        handle.tool('amd-smi', ['static', '--json']),
        handle.tool('amd-smi', ['metric', '--json']),
      ])
      const parsed = parseAmdSmi(
        requireSuccess(staticRun).stdout,
        ...(metricRun.ok ? [metricRun.stdout] : []),
      )
      if (parsed.rows.length === 0) throw new Error(parsed.problems.join('; ') || 'amd-smi listed no GPUs')
      if (!metricRun.ok) handle.problem(`amd-smi metric: ${metricRun.error}`)
      if (parsed.problems.length > 0) handle.problem(parsed.problems.join('; '))
      return parsed.rows
    }),
    ctx.probe('rocm-smi', async (handle) => {
      const parsed = parseRocmSmiJson(requireSuccess(await handle.tool('rocm-smi', ROCM_SMI_ARGS)).stdout)
      if (parsed.rows.length === 0) throw new Error(parsed.problems.join('; '))
      if (parsed.problems.length > 0) handle.problem(parsed.problems.join('; '))
      return parsed.rows
    }),
  ])
  if (amdSmi) return { rows: amdSmi, source: 'amd-smi' }
  if (rocmSmi) return { rows: rocmSmi, source: 'rocm-smi' }
  return null
}

/**
 * AMD GPU records from a tool's rows, or from amdgpu sysfs when no tool answered. An APU's VRAM is its BIOS
 * carve-out (what amdgpu reports), never the system RAM it can borrow.
 */
export function amdGpus(tool: AmdProbeData | null, pci: PciGpu[]): Gpu[] {
  const sysfs = pci.filter((device) => device.vendor === 'amd' && device.driver === 'amdgpu')
  const byBus = new Map(sysfs.map((device) => [normalizeBusId(device.busId), device]))
  const rows: { row: AmdGpuRow | null; device: PciGpu | null }[] = tool
    ? tool.rows.map((row) => ({ row, device: byBus.get(normalizeBusId(row.busId)) ?? null }))
    : sysfs.map((device) => ({ row: null, device }))
  return rows.map(({ row, device }, position) => {
    const gfxTarget = row?.gfxTarget ?? device?.gfxTarget ?? null
    const vramTotalBytes = row?.vramTotalBytes ?? device?.vramTotalBytes ?? 0
    const usedBytes = row?.vramUsedBytes ?? device?.vramUsedBytes ?? null
    const integrated =
      (gfxTarget !== null && APU_TARGETS.test(gfxTarget)) ||
      (vramTotalBytes > 0 && vramTotalBytes <= 1024 ** 3)
    const name = row?.name ?? device?.productName ?? `AMD GPU ${device?.deviceId ?? ''}`.trim()
    return gpuRecord({
      index: row?.index ?? position,
      vendor: 'amd',
      name,
      detectedBy: tool?.source ?? 'sysfs',
      busId: row?.busId ?? device?.busId ?? null,
      family: familyOf('amd', name, gfxTarget),
      integrated,
      unifiedMemory: integrated,
      vramTotalBytes,
      vramUsableBytes: vramTotalBytes,
      vramFreeBytes:
        usedBytes === null || vramTotalBytes === 0 ? null : Math.max(0, vramTotalBytes - usedBytes),
      gfxTarget,
      ...(gfxTarget ? amdPrecision(gfxTarget) : {}),
      powerLimitWatts: row?.powerLimitW ?? device?.powerCapWatts ?? null,
      powerDrawWatts: row?.powerDrawW ?? null,
      temperatureC: row?.temperatureC ?? device?.temperatureC ?? null,
      pcie: {
        gen: device?.pcie.gen ?? null,
        width: device?.pcie.width ?? null,
        maxGen: row?.pcieMaxGen ?? device?.pcie.maxGen ?? null,
        maxWidth: row?.pcieMaxWidth ?? device?.pcie.maxWidth ?? null,
      },
      driverVersion: row?.driverVersion ?? null,
      migMode: 'unsupported',
    })
  })
}
