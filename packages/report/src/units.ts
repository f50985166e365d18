/** Numbers as the page writes them: GiB with two decimals, counts grouped, hours as h / days. */
const GIB = 2 ** 30

export const toGiB = (bytes: number): number => Math.round((bytes / GIB) * 1000) / 1000

export const gibCell = (bytes: number): string => `${(bytes / GIB).toFixed(2)} GiB`

export const grouped = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

export function hoursText(hours: number): string {
  if (!Number.isFinite(hours)) return 'unbounded'
  if (hours < 1) return `${grouped(hours * 60, 1)} min`
  if (hours < 48) return `${grouped(hours, 2)} h`
  return `${grouped(hours / 24, 2)} days`
}

export const usd = (value: number): string => `$${grouped(value, 2)}`
