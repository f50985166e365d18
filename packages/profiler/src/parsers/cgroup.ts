import { parseGrepDump } from './grep-dump.js'
import { nonEmptyLines } from './values.js'

export interface CgroupLimits {
  version: 1 | 2 | null
  /** The memory this process may use; null when unlimited. */
  memoryLimitBytes: number | null
  /** CPU quota in cores (quota / period); null when unlimited. */
  cpuQuotaCores: number | null
}

/** cgroup v1 writes "unlimited" as a page-rounded LONG_MAX; anything this large means no limit. */
const UNLIMITED_THRESHOLD = 2 ** 60

/**
 * Limits from the cgroup files of one process, keyed by file name: `memory.max` and `cpu.max` (v2) or
 * `memory.limit_in_bytes`, `cpu.cfs_quota_us` and `cpu.cfs_period_us` (v1). Each value may list several
 * levels of the hierarchy (newline separated, leaf first); the tightest limit wins, as the kernel enforces.
 */
export function cgroupLimitsFromFiles(files: Record<string, string | undefined>): CgroupLimits {
  const v2 = files['memory.max'] !== undefined || files['cpu.max'] !== undefined
  const v1 = files['memory.limit_in_bytes'] !== undefined || files['cpu.cfs_quota_us'] !== undefined
  const memoryValues = (v2 ? files['memory.max'] : files['memory.limit_in_bytes']) ?? ''
  const memoryLimits = nonEmptyLines(memoryValues)
    .map((value) => (value.trim() === 'max' ? null : Number(value.trim())))
    .filter(
      (value): value is number =>
        value !== null && Number.isFinite(value) && value > 0 && value < UNLIMITED_THRESHOLD,
    )
  const cpuLimits: number[] = []
  if (v2) {
    for (const line of nonEmptyLines(files['cpu.max'] ?? '')) {
      const [quota, period] = line.trim().split(/\s+/)
      if (quota && quota !== 'max' && Number(period) > 0) cpuLimits.push(Number(quota) / Number(period))
    }
  } else {
    const quotas = nonEmptyLines(files['cpu.cfs_quota_us'] ?? '').map(Number)
    const periods = nonEmptyLines(files['cpu.cfs_period_us'] ?? '').map(Number)
    quotas.forEach((quota, level) => {
      const period = periods[level] ?? periods[0] ?? 100_000
      if (quota > 0 && period > 0) cpuLimits.push(quota / period)
    })
  }
  return {
    version: v2 ? 2 : v1 ? 1 : null,
    memoryLimitBytes: memoryLimits.length > 0 ? Math.min(...memoryLimits) : null,
    cpuQuotaCores: cpuLimits.length > 0 ? Math.round(Math.min(...cpuLimits) * 100) / 100 : null,
  }
}

/**
 * `parseCgroupLimits(dump)`: limits from a recorded `grep . <cgroup dir>/{memory.max,cpu.max,...}` dump.
 * Files of several levels (parent directories) in one dump all count; the tightest wins.
 */
export function parseCgroupLimits(text: string): CgroupLimits {
  const files: Record<string, string> = {}
  for (const [path, value] of parseGrepDump(text)) {
    const name = path.split('/').at(-1) as string
    files[name] = files[name] === undefined ? value : `${files[name]}\n${value}`
  }
  return cgroupLimitsFromFiles(files)
}

export interface ProcCgroupEntry {
  hierarchy: string
  controllers: string[]
  path: string
}

/** Parses /proc/self/cgroup: `4:memory:/docker/abc` (v1) and `0::/user.slice/...` (v2). */
export function parseProcCgroup(text: string): ProcCgroupEntry[] {
  return nonEmptyLines(text).flatMap((line) => {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line)
    if (!match) return []
    return [
      {
        hierarchy: match[1] as string,
        controllers: (match[2] as string).split(',').filter(Boolean),
        path: match[3] as string,
      },
    ]
  })
}
