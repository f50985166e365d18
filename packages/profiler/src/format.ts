const GIB = 1024 ** 3

/** Bytes as GiB with one decimal ("23.5 GiB"); small sizes in MiB. */
export function formatBytes(bytes: number): string {
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(1)} GiB`
  return `${Math.round(bytes / 1024 ** 2)} MiB`
}
