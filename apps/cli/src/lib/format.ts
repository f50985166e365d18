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

// Counts and durations as every rigfit text writes them; core's hardware search writes them in its reasons.
export { fmtCount, fmtHours } from '@rigfit/core'

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
