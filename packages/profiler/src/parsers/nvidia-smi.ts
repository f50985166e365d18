import { isMissingValue, nonEmptyLines, parseInteger, parseNumber, parseText } from './values.js'

/**
 * Fields asked of `nvidia-smi --query-gpu` in one call. Only long-standing fields are listed: a single field
 * an old driver does not know fails the whole query, which is why `compute_cap` and `mig.mode.current` are
 * asked in calls of their own. A sampler can reuse this list with `parseNvidiaSmiCsv`.
 */
export const NVIDIA_QUERY_FIELDS = [
  'index',
  'name',
  'uuid',
  'pci.bus_id',
  'driver_version',
  'memory.total',
  'memory.free',
  'memory.used',
  'utilization.gpu',
  'temperature.gpu',
  'power.draw',
  'power.limit',
  'power.default_limit',
  'power.max_limit',
  'clocks.sm',
  'clocks.mem',
  'clocks.max.sm',
  'pcie.link.gen.current',
  'pcie.link.gen.max',
  'pcie.link.width.current',
  'pcie.link.width.max',
  'pstate',
] as const
export type NvidiaQueryField = (typeof NVIDIA_QUERY_FIELDS)[number]

/** The arguments for a query of these fields, in the unit-less CSV form the parsers expect. */
export function nvidiaQueryArgs(fields: readonly string[] = NVIDIA_QUERY_FIELDS): string[] {
  return [`--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits']
}

/** Splits one line of `--format=csv` output into trimmed cells (nvidia-smi never quotes its cells). */
export function parseNvidiaCsvLine(line: string): string[] {
  return line.split(',').map((cell) => cell.trim())
}

export interface NvidiaGpuRow {
  index: number
  name: string
  uuid: string | null
  busId: string | null
  driverVersion: string | null
  memoryTotalMiB: number | null
  memoryFreeMiB: number | null
  memoryUsedMiB: number | null
  utilizationPercent: number | null
  temperatureC: number | null
  powerDrawW: number | null
  powerLimitW: number | null
  powerDefaultLimitW: number | null
  powerMaxLimitW: number | null
  clockSmMHz: number | null
  clockMemMHz: number | null
  clockMaxSmMHz: number | null
  pcieGen: number | null
  pcieGenMax: number | null
  pcieWidth: number | null
  pcieWidthMax: number | null
  pstate: string | null
}

export interface NvidiaCsvResult {
  rows: NvidiaGpuRow[]
  /** Lines that were not a GPU row (partial output, garbage), each described. */
  problems: string[]
}

/**
 * Parses `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits` (a header line, if present, is
 * skipped). A row whose cell count does not match the fields is reported in `problems`, not guessed at.
 */
export function parseNvidiaSmiCsv(
  text: string,
  fields: readonly string[] = NVIDIA_QUERY_FIELDS,
): NvidiaCsvResult {
  const rows: NvidiaGpuRow[] = []
  const problems: string[] = []
  for (const [lineNumber, line] of nonEmptyLines(text).entries()) {
    const cells = parseNvidiaCsvLine(line)
    if (cells[0] === fields[0] && lineNumber === 0) continue
    if (cells.length !== fields.length) {
      problems.push(
        `line ${lineNumber + 1}: expected ${fields.length} fields, got ${cells.length}: ${line.slice(0, 120)}`,
      )
      continue
    }
    const cell = (field: NvidiaQueryField): string | undefined => {
      const at = fields.indexOf(field)
      return at < 0 ? undefined : cells[at]
    }
    const index = parseInteger(cell('index'))
    const name = parseText(cell('name'))
    if (index === null || name === null || index < 0) {
      problems.push(`line ${lineNumber + 1}: no GPU index or name: ${line.slice(0, 120)}`)
      continue
    }
    rows.push({
      index,
      name,
      uuid: parseText(cell('uuid')),
      busId: parseText(cell('pci.bus_id')),
      driverVersion: parseText(cell('driver_version')),
      memoryTotalMiB: parseNumber(cell('memory.total')),
      memoryFreeMiB: parseNumber(cell('memory.free')),
      memoryUsedMiB: parseNumber(cell('memory.used')),
      utilizationPercent: parseNumber(cell('utilization.gpu')),
      temperatureC: parseNumber(cell('temperature.gpu')),
      powerDrawW: parseNumber(cell('power.draw')),
      powerLimitW: parseNumber(cell('power.limit')),
      powerDefaultLimitW: parseNumber(cell('power.default_limit')),
      powerMaxLimitW: parseNumber(cell('power.max_limit')),
      clockSmMHz: parseNumber(cell('clocks.sm')),
      clockMemMHz: parseNumber(cell('clocks.mem')),
      clockMaxSmMHz: parseNumber(cell('clocks.max.sm')),
      pcieGen: parseInteger(cell('pcie.link.gen.current')),
      pcieGenMax: parseInteger(cell('pcie.link.gen.max')),
      pcieWidth: parseInteger(cell('pcie.link.width.current')),
      pcieWidthMax: parseInteger(cell('pcie.link.width.max')),
      pstate: parseText(cell('pstate')),
    })
  }
  return { rows, problems }
}

/**
 * Parses a two-column per-GPU query (`--query-gpu=index,<field> --format=csv,noheader`) into index → value,
 * dropping missing values. Used for `compute_cap` and `mig.mode.current`.
 */
export function parseNvidiaIndexedValues(text: string): Map<number, string> {
  const values = new Map<number, string>()
  for (const line of nonEmptyLines(text)) {
    const [indexCell, valueCell] = parseNvidiaCsvLine(line)
    const index = parseInteger(indexCell)
    if (index === null || isMissingValue(valueCell)) continue
    values.set(index, (valueCell as string).trim())
  }
  return values
}

/** Compute capability per GPU index from `--query-gpu=index,compute_cap`; values that are not "X.Y" are dropped. */
export function parseNvidiaComputeCap(text: string): Map<number, string> {
  const caps = new Map<number, string>()
  for (const [index, value] of parseNvidiaIndexedValues(text)) {
    if (/^\d+\.\d+$/.test(value)) caps.set(index, value)
  }
  return caps
}

/** MIG mode per GPU index from `--query-gpu=index,mig.mode.current`. */
export function parseNvidiaMigMode(text: string): Map<number, 'enabled' | 'disabled'> {
  const modes = new Map<number, 'enabled' | 'disabled'>()
  for (const [index, value] of parseNvidiaIndexedValues(text)) {
    if (/^enabled$/i.test(value)) modes.set(index, 'enabled')
    else if (/^disabled$/i.test(value)) modes.set(index, 'disabled')
  }
  return modes
}

/** The CUDA version the driver supports, from the banner of plain `nvidia-smi` or from `nvidia-smi -q`. */
export function parseNvidiaCudaVersion(text: string): string | null {
  return /CUDA Version\s*:\s*([0-9]+\.[0-9]+)/.exec(text)?.[1] ?? null
}
