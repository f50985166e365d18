/** Small formatters for human output. */
export const gib = (bytes: number, digits = 1) => `${(bytes / 2 ** 30).toFixed(digits)} GiB`

/**
 * An integer with thousands commas, as `toLocaleString('en-US')` writes it, without that call's start-up cost
 * (the first one loads ICU's number formats: tens of milliseconds of a short command's CPU).
 */
export function grouped(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US')
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',')
}

export function fmtCount(value: number): string {
  if (value >= 1e12) return `${(value / 1e12).toFixed(2)}T`
  if (value >= 1e9) return `${(value / 1e9).toFixed(value >= 1e10 ? 1 : 2)}B`
  if (value >= 1e6) return `${(value / 1e6).toFixed(value >= 1e7 ? 0 : 1)}M`
  if (value >= 1e3) return `${(value / 1e3).toFixed(value >= 1e4 ? 0 : 1)}K`
  return `${Math.round(value)}`
}

export function fmtHours(hours: number): string {
  if (!Number.isFinite(hours)) return 'unbounded'
  if (hours < 1) return `${Math.max(1, Math.round(hours * 60))} min`
  if (hours < 48) return `${hours.toFixed(1)} h`
  return `${(hours / 24).toFixed(1)} days`
}

/** Left-aligned text table: the first column is labels, the others values. */
export function table(rows: string[][]): string {
  const widths: number[] = []
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length)
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}
