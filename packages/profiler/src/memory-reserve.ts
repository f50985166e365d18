const GIB = 1024 ** 3

/**
 * RAM left to the OS and everything else while training runs: 10 % of RAM, at least 1 GiB and at most
 * 4 GiB (the design's "OS and other processes: ~2-4 GB reserved", scaled down for small machines).
 */
export function osReserveBytes(totalBytes: number): number {
  return Math.round(Math.min(4 * GIB, Math.max(1 * GIB, totalBytes * 0.1), totalBytes / 2))
}
