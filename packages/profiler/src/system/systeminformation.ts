import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type { ProbeContext } from '../probe-runner.js'

/**
 * Runs systeminformation functions in a worker thread. Several of them call `execSync` inside (hostname,
 * dmidecode, sysctl, nvidia-smi), which would freeze the whole profile and defeat every timeout; in a worker
 * they can only freeze the worker, which is terminated at the deadline. Each function is one probe,
 * `systeminformation.<name>`; the answer maps a name to its result (absent when it failed or timed out).
 */
export async function runSystemInformation(
  ctx: ProbeContext,
  functions: string[],
): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {}
  if (functions.length === 0) return results
  const started = performance.now()
  const modulePath = createRequire(import.meta.url).resolve('systeminformation')
  const pending = new Set(functions)
  await ctx.probe('systeminformation', async (handle) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { modulePath, functions } })
    worker.unref()
    try {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ctx.options.timeoutMs)
        worker.on('message', (message: { name: string; ok: boolean; value?: unknown; error?: string }) => {
          pending.delete(message.name)
          if (message.ok) results[message.name] = message.value
          else handle.problem(`${message.name}: ${message.error}`)
          if (pending.size === 0) {
            clearTimeout(timer)
            resolve()
          }
        })
        worker.on('error', (error) => {
          handle.problem(error.message)
          clearTimeout(timer)
          resolve()
        })
      })
    } finally {
      await worker.terminate()
    }
    if (pending.size > 0) {
      handle.problem(`no answer within ${ctx.options.timeoutMs} ms from ${[...pending].join(', ')}`)
    }
    ctx.raw.push({
      probe: 'systeminformation',
      source: `systeminformation ${functions.join(' ')}`,
      ok: pending.size === 0,
      exitCode: null,
      ms: Math.round(performance.now() - started),
      stdout: JSON.stringify(results, null, 2),
      stderr: '',
    })
  })
  return results
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const si = require(workerData.modulePath)
for (const name of workerData.functions) {
  Promise.resolve()
    .then(() => si[name]())
    .then(
      (value) => parentPort.postMessage({ name, ok: true, value: JSON.parse(JSON.stringify(value)) }),
      (error) => parentPort.postMessage({ name, ok: false, error: String((error && error.message) || error) }),
    )
}
`
