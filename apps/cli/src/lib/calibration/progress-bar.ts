import { fmtCount } from '../format.js'

/** A one-line progress bar on stderr while a measurement runs; nothing when stderr is not a terminal. */
export function progressBar(stream: NodeJS.WriteStream, seconds: number) {
  if (!stream.isTTY) return null
  let drawn = false
  const started = Date.now()
  return {
    update: (p: { fraction: number; tokensPerSecond: number | null; steps: number }) => {
      const filled = Math.round(p.fraction * 20)
      const speed = p.tokensPerSecond === null ? 'warming up' : `${fmtCount(p.tokensPerSecond)} tokens/s`
      const text = `Calibrating [${'#'.repeat(filled)}${'-'.repeat(20 - filled)}] ${p.steps} steps, ${speed}, ${Math.round((Date.now() - started) / 1000)} s (budget ${seconds} s)`
      stream.write(`\r\u001b[2K${text.slice(0, Math.max(20, (stream.columns ?? 80) - 1))}`)
      drawn = true
    },
    done: () => {
      if (drawn) stream.write('\r\u001b[2K')
    },
  }
}
