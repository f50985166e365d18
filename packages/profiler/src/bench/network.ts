export interface NetworkBenchmarkResult {
  status: 'measured' | 'offline'
  downloadMbps: number | null
  bytes: number
  error: string | null
}

/**
 * Downloads from a user-chosen URL for at most `budgetMs` and reports megabits per second. rigfit has no
 * default target: where none is configured the network stays "not measured". Needs at least 64 KiB within
 * the budget for a figure; an unreachable target answers `offline` with the reason.
 */
export async function measureDownload(
  url: string,
  budgetMs = 2500,
  onProgress?: (fraction: number) => void,
): Promise<NetworkBenchmarkResult> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), budgetMs)
  const started = performance.now()
  let bytes = 0
  try {
    const response = await fetch(url, { signal: controller.signal, redirect: 'follow' })
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`)
    const reader = response.body.getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        bytes += value.byteLength
        onProgress?.(Math.min(1, (performance.now() - started) / budgetMs))
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error
    }
    const seconds = (performance.now() - started) / 1000
    if (bytes < 64 * 1024)
      return {
        status: 'offline',
        downloadMbps: null,
        bytes,
        error: `only ${bytes} bytes arrived in ${budgetMs} ms`,
      }
    return {
      status: 'measured',
      downloadMbps: Math.round(((bytes * 8) / seconds / 1e6) * 10) / 10,
      bytes,
      error: null,
    }
  } catch (error) {
    const reason = controller.signal.aborted
      ? `no answer within ${budgetMs} ms`
      : (((error as Error).cause as Error | undefined)?.message ?? (error as Error).message)
    return { status: 'offline', downloadMbps: null, bytes, error: reason }
  } finally {
    clearTimeout(timer)
  }
}
