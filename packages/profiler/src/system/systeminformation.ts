import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type { ProbeContext, ProbeHandle } from '../probe-runner.js'
import {
  BOOT_STATIC_FUNCTIONS,
  bootFactsEnabled,
  bootFactsPath,
  currentBootKey,
  readBootFacts,
  writeBootFacts,
} from './boot-facts.js'

/**
 * Runs systeminformation functions in a worker thread. Several of them call `execSync` inside (hostname,
 * dmidecode, sysctl, nvidia-smi), which would freeze the whole profile and defeat every timeout; in a worker
 * they can only freeze the worker, which is terminated at the deadline. Each function is one probe,
 * `systeminformation.<name>`; the answer maps a name to its result (absent when it failed or timed out). Answers
 * that stay the same until a reboot are read back from this boot's record where one is kept (boot-facts.ts).
 */
export async function runSystemInformation(
  ctx: ProbeContext,
  functions: string[],
): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {}
  if (functions.length === 0) return results
  const started = performance.now()
  const env = ctx.options.env
  const store = bootFactsEnabled(env) ? bootFactsPath(env) : null
  const key = store === null ? null : await currentBootKey(env)
  const kept = store === null || key === null ? {} : await readBootFacts(store, key)
  const reused = functions.filter((name) => Object.hasOwn(kept, name))
  const asked = functions.filter((name) => !Object.hasOwn(kept, name))
  await ctx.probe('systeminformation', async (handle) => {
    for (const name of reused) results[name] = kept[name]
    if (reused.length > 0) {
      ctx.raw.push({
        probe: 'systeminformation',
        source: `systeminformation ${reused.join(' ')} (kept for this boot in ${store})`,
        ok: true,
        exitCode: null,
        ms: 0,
        stdout: JSON.stringify(Object.fromEntries(reused.map((name) => [name, kept[name]])), null, 2),
        stderr: '',
      })
    }
    if (asked.length === 0) return
    const answered = await askWorker(ctx, handle, asked, results, started)
    if (store !== null && key !== null && answered.some((name) => BOOT_STATIC_FUNCTIONS.has(name))) {
      const failure = await writeBootFacts(store, key, { ...kept, ...results })
      // The profile is whole without it: the next one only asks again.
      if (failure !== null)
        ctx.raw.push({
          probe: 'systeminformation',
          source: `keep this boot's answers in ${store}`,
          ok: false,
          exitCode: null,
          ms: 0,
          stdout: '',
          stderr: failure,
        })
    }
  })
  return results
}

/** Asks a worker for `functions` until they answer or the deadline; returns the names that answered. */
async function askWorker(
  ctx: ProbeContext,
  handle: ProbeHandle,
  functions: string[],
  results: Record<string, unknown>,
  started: number,
): Promise<string[]> {
  const modulePath = createRequire(import.meta.url).resolve('systeminformation')
  const pending = new Set(functions)
  const answered: string[] = []
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { modulePath, functions } })
  worker.unref()
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ctx.options.timeoutMs)
      worker.on('message', (message: { name: string; ok: boolean; value?: unknown; error?: string }) => {
        pending.delete(message.name)
        if (message.ok) {
          results[message.name] = message.value
          answered.push(message.name)
        } else handle.problem(`${message.name}: ${message.error}`)
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
    stdout: JSON.stringify(
      Object.fromEntries(
        functions.filter((name) => Object.hasOwn(results, name)).map((name) => [name, results[name]]),
      ),
      null,
      2,
    ),
    stderr: '',
  })
  return answered
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
