const GIB = 1024 ** 3

export function formatGiB(bytes: number | null): string {
  return bytes === null ? '?' : (bytes / GIB).toFixed(1)
}

/** 42s, 3m05s, 1h12m, 2d03h. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '?'
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  if (s < 86400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
  return `${Math.floor(s / 86400)}d${String(Math.floor((s % 86400) / 3600)).padStart(2, '0')}h`
}

/** 950, 12.4k, 3.1M. */
export function formatCount(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return '?'
  if (value >= 1e6) return `${(value / 1e6).toFixed(1)}M`
  if (value >= 1e4) return `${(value / 1e3).toFixed(1)}k`
  if (value >= 100) return value.toFixed(0)
  return value.toFixed(value >= 10 ? 1 : 2)
}
