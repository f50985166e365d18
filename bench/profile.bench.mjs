// Speed and accuracy of the hardware profiler (run after `pnpm build`):
// - `rigfit profile` without --benchmark, wall time end to end (target under 1 s, median of 5), beside `inxi -F`;
// - the memory-bandwidth figure beside mbw and sysbench memory (target within 20 %);
// - the disk figures beside fio with the same access pattern (target within 25 %).
// Each comparison interleaves the two tools run by run, because a shared machine's disk and memory drift.
// Tools that are not installed (apt-get install mbw sysbench fio inxi) are reported as such.
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const cli = fileURLToPath(new URL('../apps/cli/bin/run.js', import.meta.url))
const profiler = await import(new URL('../packages/profiler/dist/index.js', import.meta.url).href)
const RUNS = 5
// The disk of a shared machine drifts most: more interleaved pairs give steadier medians.
const DISK_RUNS = 9
const MIB = 1024 * 1024

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const round = (value, digits = 2) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits)
const ratio = (ours, theirs) =>
  ours === null || theirs === null || theirs === 0 ? null : round(ours / theirs)
const installed = (tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0

function wallMs(command, args) {
  const start = process.hrtime.bigint()
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * MIB })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
  return ms
}

function timed(label, command, args) {
  wallMs(command, args)
  const times = Array.from({ length: RUNS }, () => wallMs(command, args))
  const ms = Math.round(median(times))
  console.log(
    `${label}: median ${ms} ms over ${RUNS} runs (min ${Math.round(Math.min(...times))}, max ${Math.round(Math.max(...times))})`,
  )
  return ms
}

// 1. Wall time of a profile.
const figures = {}
figures.profileMs = timed('rigfit profile', process.execPath, [cli, 'profile'])
figures.profileJsonMs = timed('rigfit profile --json', process.execPath, [cli, 'profile', '--json'])
const libraryTimes = []
for (let run = 0; run < RUNS; run += 1) {
  const start = performance.now()
  await profiler.collectProfile()
  libraryTimes.push(performance.now() - start)
}
figures.collectProfileMs = Math.round(median(libraryTimes))
console.log(`collectProfile() in process: median ${figures.collectProfileMs} ms`)
if (installed('inxi')) {
  figures.inxiMs = timed('inxi -F', 'inxi', ['-F', '-c', '0'])
  figures.profileVsInxi = ratio(figures.profileMs, figures.inxiMs)
  console.log(`rigfit profile / inxi -F: ${figures.profileVsInxi}`)
} else console.log('inxi: not installed')

// 2. Memory bandwidth: rigfit's median copy rate beside mbw (256 MiB arrays, 10 runs) and sysbench (256 MiB blocks).
const ours = []
const mbw = { MEMCPY: [], DUMB: [], MCBLOCK: [] }
for (let run = 0; run < RUNS; run += 1) {
  ours.push((await profiler.measureMemoryBandwidth()).gbs)
  if (installed('mbw')) {
    const out = spawnSync('mbw', ['-q', '-n', '10', '256'], { encoding: 'utf8' }).stdout
    for (const match of out.matchAll(/^AVG\s+Method: (\w+).*Copy: ([\d.]+) MiB\/s/gm))
      mbw[match[1]]?.push((Number(match[2]) * MIB) / 1e9)
  }
}
figures.memoryGBs = round(median(ours))
console.log(
  `rigfit memory bandwidth (copy, GB/s): median ${figures.memoryGBs} of ${ours.map((v) => round(v)).join(', ')}`,
)
for (const [method, values] of Object.entries(mbw)) {
  if (values.length === 0) continue
  figures[`mbw${method}GBs`] = round(median(values))
  figures[`memoryVsMbw${method}`] = ratio(figures.memoryGBs, figures[`mbw${method}GBs`])
  console.log(
    `mbw ${method} (GB/s): median ${figures[`mbw${method}GBs`]}; rigfit / mbw = ${figures[`memoryVsMbw${method}`]}`,
  )
}
if (installed('sysbench')) {
  for (const operation of ['read', 'write']) {
    const out = spawnSync(
      'sysbench',
      ['memory', '--memory-block-size=256M', '--memory-total-size=4G', `--memory-oper=${operation}`, 'run'],
      { encoding: 'utf8' },
    ).stdout
    const mibs = Number(/\(([\d.]+) MiB\/sec\)/.exec(out)?.[1])
    figures[`sysbench${operation}GBs`] = Number.isFinite(mibs) ? round((mibs * MIB) / 1e9) : null
    console.log(`sysbench memory ${operation} (GB/s, one direction): ${figures[`sysbench${operation}GBs`]}`)
  }
}

// 3. Disk: 1 GiB sequential write (ending with fsync) and read, 1 MiB blocks, O_DIRECT, in this repository's
// filesystem. fio gets the same pattern: extending writes into a new file (--fallocate=none; rigfit does not
// preallocate, and writing into preallocated unwritten extents is a different, slower path).
const dir = fileURLToPath(new URL('..', import.meta.url))
const fioFile = `${dir}.rigfit-fio-bench.tmp`
const disk = { write: [], read: [], fioWrite: [], fioRead: [] }
let method = null
for (let run = 0; run < DISK_RUNS; run += 1) {
  const result = await profiler.measureDisk({
    dir,
    sizeBytes: 1024 * MIB,
    writeBudgetMs: 6000,
    readBudgetMs: 6000,
  })
  method = result.method
  disk.write.push(result.writeMBs)
  if (result.readMBs !== null) disk.read.push(result.readMBs)
  if (installed('fio')) {
    for (const [rw, key] of [
      ['write', 'fioWrite'],
      ['read', 'fioRead'],
    ]) {
      const args = [
        '--name=rigfit',
        `--filename=${fioFile}`,
        `--rw=${rw}`,
        '--bs=1M',
        '--size=1024M',
        '--direct=1',
        '--fallocate=none',
        '--ioengine=psync',
        '--output-format=json',
      ]
      if (rw === 'write') args.push('--end_fsync=1')
      const job = JSON.parse(spawnSync('fio', args, { encoding: 'utf8' }).stdout).jobs[0]
      disk[key].push(job[rw].bw_bytes / 1e6)
    }
    rmSync(fioFile, { force: true })
  }
}
console.log(`rigfit disk method: ${method}`)
for (const [key, values] of Object.entries(disk)) {
  if (values.length === 0) continue
  figures[`disk${key[0].toUpperCase()}${key.slice(1)}MBs`] = Math.round(median(values))
  console.log(
    `${key} (MB/s): median ${Math.round(median(values))} of ${values.map((v) => Math.round(v)).join(', ')}`,
  )
}
figures.diskWriteVsFio = ratio(figures.diskWriteMBs ?? null, figures.diskFioWriteMBs ?? null)
figures.diskReadVsFio = ratio(figures.diskReadMBs ?? null, figures.diskFioReadMBs ?? null)
console.log(`rigfit / fio: write ${figures.diskWriteVsFio}, read ${figures.diskReadVsFio}`)

console.log(
  JSON.stringify({
    bench: 'profile',
    ...figures,
    targets: { profileMs: 1000, memoryWithin: 0.2, diskWithin: 0.25 },
  }),
)
