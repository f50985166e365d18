// CPU cost of `rigfit monitor` sampling at 1 Hz (run after `pnpm build`). Target: at most 1% of one core.
// 1. The sampler alone, in this process: one persistent (fake) nvidia-smi streaming with -lms 1000, plus the
//    /proc and /sys reads for CPU, RAM and battery each second. Measured with process.cpuUsage() over a window
//    after a warm-up; the stand-in nvidia-smi's own CPU is not the monitor's and is left out.
// 2. The whole monitor: the real CLI supervising a trainer that prints a metric each second, recording every
//    sample to its JSONL log; its CPU time read from /proc/<pid>/stat over the same kind of window.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Sampler } from '../packages/monitor/dist/index.js'

const WARMUP_MS = 3000
const WINDOW_MS = 10_000
const fixtures = fileURLToPath(new URL('../packages/monitor/test/fixtures/', import.meta.url))
const cli = fileURLToPath(new URL('../apps/cli/bin/run.js', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'rigfit-monitor-bench-'))
const env = {
  ...process.env,
  PATH: `${fixtures}bin:${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
  RIGFIT_FAKE_NVIDIA_SMI_SCENARIO: `${fixtures}nvidia-smi/workstation-rtx4090.json`,
}

async function samplerAlone() {
  const sampler = new Sampler({
    intervalMs: 1000,
    nvidiaSmi: 'nvidia-smi',
    procRoot: '/proc',
    sysfsRoot: '/sys',
    useProcfs: process.platform === 'linux',
    env,
  })
  let samples = 0
  sampler.on('sample', () => {
    samples += 1
  })
  sampler.start()
  await delay(WARMUP_MS)
  const before = process.cpuUsage()
  const samplesBefore = samples
  const start = performance.now()
  await delay(WINDOW_MS)
  const used = process.cpuUsage(before)
  const wallMs = performance.now() - start
  sampler.stop()
  return {
    percent: ((used.user + used.system) / 1000 / wallMs) * 100,
    samples: samples - samplesBefore,
    wallMs,
  }
}

/** utime + stime of a process, in milliseconds (Linux). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

async function wholeMonitor() {
  const trainer = join(fixtures, 'bin', 'fake-trainer.mjs')
  const steps = String(Math.ceil((WARMUP_MS + WINDOW_MS) / 1000) + 5)
  const child = spawn(
    process.execPath,
    [
      cli,
      'monitor',
      '--quiet',
      '--log-dir',
      join(work, 'log'),
      '--interval-ms',
      '1000',
      '--',
      process.execPath,
      trainer,
      '--steps',
      steps,
      '--step-ms',
      '1000',
    ],
    { env: { ...env, RIGFIT_SYSFS_ROOT: join(work, 'no-sysfs') }, stdio: ['ignore', 'ignore', 'ignore'] },
  )
  const exited = new Promise((resolve) => child.on('exit', resolve))
  await delay(WARMUP_MS)
  const before = cpuMs(child.pid)
  const start = performance.now()
  await delay(WINDOW_MS)
  const used = cpuMs(child.pid) - before
  const wallMs = performance.now() - start
  child.kill('SIGINT')
  await exited
  const records = readFileSync(join(work, 'log', 'monitor.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.includes('"type":"sample"')).length
  return { percent: (used / wallMs) * 100, records, wallMs }
}

const alone = await samplerAlone()
console.log(
  `sampler alone at 1 Hz: ${alone.percent.toFixed(3)}% of one core (${alone.samples} samples in ${(alone.wallMs / 1000).toFixed(1)} s)`,
)
let whole = null
if (process.platform === 'linux') {
  whole = await wholeMonitor()
  console.log(
    `whole monitor process at 1 Hz (CLI, supervisor, JSONL log): ${whole.percent.toFixed(3)}% of one core (clock-tick resolution 10 ms; ${whole.records} samples recorded)`,
  )
}
const target = 1
console.log(
  `target: at most ${target}% of one core — ${alone.percent <= target && (whole === null || whole.percent <= target) ? 'met' : 'NOT met'}`,
)
console.log(
  JSON.stringify({
    bench: 'monitor',
    samplerCpuPercent: Number(alone.percent.toFixed(4)),
    samplerSamples: alone.samples,
    monitorProcessCpuPercent: whole === null ? null : Number(whole.percent.toFixed(4)),
    windowSeconds: WINDOW_MS / 1000,
    targetCpuPercent: target,
  }),
)
