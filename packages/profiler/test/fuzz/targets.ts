import { Gpu } from '@rigfit/core'
import { type FuzzTarget, mutatedJson, mutatedText } from '@rigfit/fuzz-kit'
import type fc from 'fast-check'
import { z } from 'zod'
import { amdGpus } from '../../src/gpu/amd.js'
import { macGpus } from '../../src/gpu/apple.js'
import { nvidiaGpus } from '../../src/gpu/nvidia.js'
import { parseAmdSmi } from '../../src/parsers/amd-smi.js'
import { parseCgroupLimits, parseProcCgroup } from '../../src/parsers/cgroup.js'
import { parseCpuinfo } from '../../src/parsers/cpuinfo.js'
import { parseMeminfo } from '../../src/parsers/meminfo.js'
import { parseMountinfo } from '../../src/parsers/mountinfo.js'
import {
  parseNvidiaComputeCap,
  parseNvidiaCudaVersion,
  parseNvidiaMigMode,
  parseNvidiaSmiCsv,
} from '../../src/parsers/nvidia-smi.js'
import { parseNvidiaTopo } from '../../src/parsers/nvidia-topo.js'
import { parseOsRelease } from '../../src/parsers/os-release.js'
import { parsePmsetBattery } from '../../src/parsers/pmset.js'
import { parsePowerSupplyTree } from '../../src/parsers/power-supply.js'
import { parseProcSwaps } from '../../src/parsers/proc-swaps.js'
import { parseRocmSmiJson } from '../../src/parsers/rocm-smi.js'
import { parseSysctl, sysctlNumber } from '../../src/parsers/sysctl.js'
import { parseSystemProfilerDisplays } from '../../src/parsers/system-profiler.js'
import { parseXpuSmiDiscovery } from '../../src/parsers/xpu-smi.js'
import { recorded, WRITTEN } from './corpus.js'
import * as expect from './expectations.js'

const GiB = 1024 ** 3
const GpuRecords = z.array(Gpu)

function target<T>(
  name: string,
  input: fc.Arbitrary<string>,
  parse: (text: string) => T,
  check: (answer: T) => void,
) {
  return { name, input, parse, check: (answer: unknown) => check(answer as T) } satisfies FuzzTarget
}

const csv = (name: string) => /\.csv$/.test(name) && !/\.(compute_cap|mig)\.csv$/.test(name)

export type { FuzzTarget }

export const TARGETS: FuzzTarget[] = [
  target(
    'nvidia-smi --query-gpu csv',
    mutatedText(recorded('nvidia-smi', csv)),
    parseNvidiaSmiCsv,
    (answer) => {
      expect.NvidiaCsv.parse(answer)
      // What reaches a profile must be a valid GPU record.
      GpuRecords.parse(
        nvidiaGpus({
          rows: answer.rows,
          computeCaps: new Map(),
          migModes: null,
          cudaVersion: null,
          topo: null,
        }),
      )
    },
  ),
  target(
    'nvidia-smi compute_cap and mig',
    mutatedText(recorded('nvidia-smi', (name) => /\.(compute_cap|mig)\.csv$/.test(name))),
    (text) => ({ caps: parseNvidiaComputeCap(text), mig: parseNvidiaMigMode(text) }),
    ({ caps, mig }) => {
      expect.IndexedValues.parse(caps)
      expect.IndexedValues.parse(mig)
      for (const cap of caps.values())
        z.string()
          .regex(/^\d+\.\d+$/)
          .parse(cap)
      for (const mode of mig.values()) z.enum(['enabled', 'disabled']).parse(mode)
    },
  ),
  target(
    'nvidia-smi banner',
    mutatedText(recorded('nvidia-smi', (name) => name.endsWith('.txt'))),
    parseNvidiaCudaVersion,
    (answer) =>
      z
        .string()
        .regex(/^\d+\.\d+$/)
        .nullable()
        .parse(answer),
  ),
  target('nvidia-smi topo -m', mutatedText(recorded('nvidia-topo')), parseNvidiaTopo, (answer) =>
    expect.Topo.parse(answer),
  ),
  target('rocm-smi --json', mutatedJson(recorded('rocm-smi')), parseRocmSmiJson, (answer) => {
    expect.AmdRows.parse(answer)
    GpuRecords.parse(amdGpus({ rows: answer.rows, source: 'rocm-smi' }, []))
  }),
  target(
    'amd-smi static/metric --json',
    mutatedJson(recorded('amd-smi')),
    (text) => parseAmdSmi(text, text),
    (answer) => {
      expect.AmdRows.parse(answer)
      GpuRecords.parse(amdGpus({ rows: answer.rows, source: 'amd-smi' }, []))
    },
  ),
  target('xpu-smi discovery -j', mutatedJson(WRITTEN.xpuSmi), parseXpuSmiDiscovery, (answer) =>
    expect.XpuRows.parse(answer),
  ),
  target(
    'system_profiler SPDisplaysDataType -json',
    mutatedJson(recorded('system_profiler')),
    parseSystemProfilerDisplays,
    (answer) => {
      expect.MacDisplays.parse(answer)
      GpuRecords.parse(macGpus(answer.gpus, {}, 16 * GiB))
    },
  ),
  target(
    'sysctl',
    mutatedText(recorded('sysctl')),
    (text) => {
      const values = parseSysctl(text)
      return { values, memsize: sysctlNumber(values, 'hw.memsize', { min: 0, max: 2 ** 53, unit: 'bytes' }) }
    },
    ({ values, memsize }) => {
      expect.StringRecord.parse(values)
      z.number()
        .int()
        .min(0)
        .max(2 ** 53)
        .nullable()
        .parse(memsize)
    },
  ),
  target('pmset -g batt', mutatedText(WRITTEN.pmset), parsePmsetBattery, (answer) =>
    expect.Power.parse(answer),
  ),
  target('/proc/cpuinfo', mutatedText(recorded('cpuinfo')), parseCpuinfo, (answer) =>
    expect.Cpuinfo.parse(answer),
  ),
  target('/proc/meminfo', mutatedText(recorded('meminfo')), parseMeminfo, (answer) =>
    expect.Meminfo.parse(answer),
  ),
  target('/proc/self/mountinfo', mutatedText(recorded('mountinfo')), parseMountinfo, (answer) =>
    expect.Mounts.parse(answer),
  ),
  target('cgroup limits (grep dump)', mutatedText(recorded('cgroup')), parseCgroupLimits, (answer) =>
    expect.Cgroup.parse(answer),
  ),
  target('/proc/self/cgroup', mutatedText(WRITTEN.procCgroup), parseProcCgroup, (answer) =>
    expect.ProcCgroup.parse(answer),
  ),
  target('/etc/os-release', mutatedText(WRITTEN.osRelease), parseOsRelease, (answer) =>
    expect.StringRecord.parse(answer),
  ),
  target('/proc/swaps', mutatedText(WRITTEN.procSwaps), parseProcSwaps, (answer) =>
    expect.Swaps.parse(answer),
  ),
  target('power_supply (grep dump)', mutatedText(recorded('power_supply')), parsePowerSupplyTree, (answer) =>
    expect.Power.parse(answer),
  ),
]
