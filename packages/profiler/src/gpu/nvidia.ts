import type { Gpu } from '@rigfit/core'
import { familyOf, nvidiaPrecision } from '@rigfit/core'
import { findExecutable } from '../exec/which.js'
import {
  type NvidiaGpuRow,
  nvidiaQueryArgs,
  parseNvidiaComputeCap,
  parseNvidiaCudaVersion,
  parseNvidiaMigMode,
  parseNvidiaSmiCsv,
} from '../parsers/nvidia-smi.js'
import { type NvidiaTopo, parseNvidiaTopo } from '../parsers/nvidia-topo.js'
import { type ProbeContext, requireSuccess } from '../probe-runner.js'
import { gpuRecord } from './gpu-record.js'

export interface NvidiaProbeData {
  rows: NvidiaGpuRow[]
  computeCaps: Map<number, string>
  /** null when the MIG query itself failed (old driver); a missing index then means "not supported". */
  migModes: Map<number, 'enabled' | 'disabled'> | null
  cudaVersion: string | null
  topo: NvidiaTopo | null
}

const MIB = 1024 * 1024

/**
 * Asks `nvidia-smi` directly, asynchronously and with a deadline, whether or not `lspci` exists: the main
 * query, then `compute_cap` and `mig.mode.current` on their own (a field an old driver does not know fails
 * the whole query), the topology matrix, and the banner for the CUDA version. All run in parallel.
 */
export async function probeNvidia(ctx: ProbeContext): Promise<NvidiaProbeData | null> {
  if ((await findExecutable('nvidia-smi', ctx.options.env)) === null) {
    ctx.absentProbe('nvidia-smi', 'nvidia-smi not found on PATH')
    return null
  }
  const [main, caps, mig, topo, banner] = await Promise.all([
    ctx.probe('nvidia-smi', async (handle) => {
      const result = requireSuccess(await handle.tool('nvidia-smi', nvidiaQueryArgs()))
      const parsed = parseNvidiaSmiCsv(result.stdout)
      if (parsed.rows.length === 0)
        throw new Error(`nvidia-smi printed no GPU rows${describe(parsed.problems)}`)
      if (parsed.problems.length > 0) handle.problem(`partial output${describe(parsed.problems)}`)
      return parsed.rows
    }),
    ctx.probe('nvidia-smi compute_cap', async (handle) =>
      parseNvidiaComputeCap(
        requireSuccess(await handle.tool('nvidia-smi', nvidiaQueryArgs(['index', 'compute_cap']))).stdout,
      ),
    ),
    ctx.probe('nvidia-smi mig', async (handle) =>
      parseNvidiaMigMode(
        requireSuccess(await handle.tool('nvidia-smi', nvidiaQueryArgs(['index', 'mig.mode.current'])))
          .stdout,
      ),
    ),
    ctx.probe('nvidia-smi topo', async (handle) => {
      const topo = parseNvidiaTopo(requireSuccess(await handle.tool('nvidia-smi', ['topo', '-m'])).stdout)
      if (topo.problems.length > 0) handle.problem(`partial output${describe(topo.problems)}`)
      return topo
    }),
    ctx.probe('nvidia-smi banner', async (handle) => {
      const version = parseNvidiaCudaVersion(requireSuccess(await handle.tool('nvidia-smi', [])).stdout)
      if (!version) throw new Error('no "CUDA Version" in the nvidia-smi banner')
      return version
    }),
  ])
  if (!main) return null
  return { rows: main, computeCaps: caps ?? new Map(), migModes: mig, cudaVersion: banner, topo }
}

function describe(problems: string[]): string {
  return problems.length > 0 ? ` (${problems.slice(0, 3).join('; ')})` : ''
}

/** GPU records from what nvidia-smi said; compute capability and precision stay unknown where it was not told. */
export function nvidiaGpus(data: NvidiaProbeData): Gpu[] {
  return data.rows.map((row) => {
    const computeCapability = data.computeCaps.get(row.index) ?? null
    const vramTotalBytes = Math.round((row.memoryTotalMiB ?? 0) * MIB)
    const integrated = /orin|xavier|tegra|nvgpu/i.test(row.name)
    return gpuRecord({
      index: row.index,
      vendor: 'nvidia',
      name: row.name,
      detectedBy: 'nvidia-smi',
      uuid: row.uuid,
      busId: row.busId,
      family: familyOf('nvidia', row.name, computeCapability),
      integrated,
      unifiedMemory: integrated,
      vramTotalBytes,
      vramUsableBytes: vramTotalBytes,
      vramFreeBytes: row.memoryFreeMiB === null ? null : Math.round(row.memoryFreeMiB * MIB),
      computeCapability,
      ...(computeCapability ? nvidiaPrecision(computeCapability, row.name) : {}),
      tdpWatts: row.powerDefaultLimitW,
      powerLimitWatts: row.powerLimitW,
      powerDrawWatts: row.powerDrawW,
      temperatureC: row.temperatureC,
      utilizationPercent: row.utilizationPercent,
      clocks: { smMHz: row.clockSmMHz, memMHz: row.clockMemMHz, maxSmMHz: row.clockMaxSmMHz },
      pcie: { gen: row.pcieGen, width: row.pcieWidth, maxGen: row.pcieGenMax, maxWidth: row.pcieWidthMax },
      driverVersion: row.driverVersion,
      migMode: data.migModes === null ? 'unknown' : (data.migModes.get(row.index) ?? 'unsupported'),
    })
  })
}
