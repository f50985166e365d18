// How fast short commands start: CPU seconds (user + system of the child and everything it waited for, the
// figure machine load does not move) and wall time of `rigfit --help`, `estimate`, `plan` (one what-if GPU),
// `analyze`, `profile --json` and `rules list`, printed beside the start-up targets. `profile --json` is compared
// with `inxi -F` measured in the same run, when inxi is installed. Node's own start (`node -e 0`) is printed too,
// so figures from a slower or busier machine can be read against it. Medians of RUNS runs after one warm-up
// (which also fills Node's compile cache); then one `decide` call in-process once packs are loaded.
// Run after `pnpm build`; `pnpm bench` runs it.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const cli = fileURLToPath(new URL('../apps/cli/bin/run.js', import.meta.url))
const RUNS = 7
// An empty config folder, so the figures do not depend on the packs a user has installed.
const config = mkdtempSync(join(tmpdir(), 'rigfit-bench-'))

// CPU seconds targets (medians); profile's target is inxi -F, measured below.
const COMMANDS = [
  { label: 'rigfit --help', args: ['--help'], target: 0.08 },
  {
    label: 'rigfit estimate',
    // The estimate of the issue that set these targets: QLoRA of an 8B model on one RTX 4090.
    args: 'estimate --model llama-3.1-8b --gpu RTX_4090 --seq 1024 --micro-batch 1 --lora-rank 16 --quant nf4'
      .split(' ')
      .map((arg) => arg.replace('_', ' ')),
    target: 0.12,
  },
  {
    label: 'rigfit plan (one what-if GPU)',
    args: ['plan', '--gpu', 'RTX 4090', '--model', 'llama-3.2-1b'],
    target: 0.2,
  },
  { label: 'rigfit analyze', args: ['analyze'], target: 0.25 },
  { label: 'rigfit profile --json', args: ['profile', '--json'], target: 'inxi -F' },
  { label: 'rigfit rules list', args: ['rules', 'list'], target: null },
]

// On Linux the children's CPU time is in /proc/self/stat (fields 16 and 17, in USER_HZ = 100 ticks a second),
// counted once a child has been waited for; elsewhere POSIX `time -p` prints it.
const procStat = '/proc/self/stat'
function childTicks() {
  const fields = readFileSync(procStat, 'utf8').split(') ')[1].split(' ')
  return Number(fields[13]) + Number(fields[14])
}

/** One run: { cpu, wall } in seconds. */
function measure(command, args) {
  const env = { ...process.env, XDG_CONFIG_HOME: config }
  const start = process.hrtime.bigint()
  if (existsSync(procStat)) {
    const before = childTicks()
    const result = spawnSync(command, args, { encoding: 'utf8', env })
    const wall = Number(process.hrtime.bigint() - start) / 1e9
    check(result, command, args)
    return { cpu: (childTicks() - before) / 100, wall }
  }
  const result = spawnSync('/usr/bin/time', ['-p', command, ...args], { encoding: 'utf8', env })
  const wall = Number(process.hrtime.bigint() - start) / 1e9
  check(result, command, args)
  const seconds = (name) =>
    Number(result.stderr.match(new RegExp(`^${name} ([\\d.]+)$`, 'm'))?.[1] ?? Number.NaN)
  return { cpu: seconds('user') + seconds('sys'), wall }
}

function check(result, command, args) {
  if (result.error) throw result.error
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

function series(command, args) {
  measure(command, args)
  const runs = Array.from({ length: RUNS }, () => measure(command, args))
  return { cpu: median(runs.map((run) => run.cpu)), wall: median(runs.map((run) => run.wall)) }
}

const hasInxi = spawnSync('inxi', ['--version'], { encoding: 'utf8' }).status === 0
const figures = {}
const rows = []
try {
  figures['node -e 0'] = series(process.execPath, ['-e', '0'])
  if (hasInxi) figures['inxi -F'] = series('inxi', ['-F'])
  for (const { label, args, target } of COMMANDS) {
    figures[label] = series(process.execPath, [cli, ...args])
    const limit = target === 'inxi -F' ? figures['inxi -F']?.cpu : target
    rows.push({ label, target, limit, ...figures[label] })
  }
} finally {
  rmSync(config, { recursive: true, force: true })
}

const s = (value) => (value === undefined ? '-' : `${value.toFixed(3)} s`)
console.log(`CPU seconds (user + system, median of ${RUNS}) and wall time; node ${process.version}`)
console.log(`${'command'.padEnd(32)}${'CPU'.padStart(10)}${'wall'.padStart(10)}   target`)
for (const label of ['node -e 0', ...(hasInxi ? ['inxi -F'] : [])])
  console.log(
    `${label.padEnd(32)}${s(figures[label].cpu).padStart(10)}${s(figures[label].wall).padStart(10)}`,
  )
for (const row of rows) {
  const target =
    row.target === null
      ? ''
      : row.limit === undefined
        ? `<= ${row.target} (not installed)`
        : `<= ${typeof row.target === 'string' ? `${row.target}, ${s(row.limit)}` : s(row.limit)} CPU: ${row.cpu <= row.limit ? 'met' : 'not met'}`
  console.log(`${row.label.padEnd(32)}${s(row.cpu).padStart(10)}${s(row.wall).padStart(10)}   ${target}`)
}

// In-process: what the planner pays per mode once the packs are loaded and the engine is built.
const core = await import('../packages/core/dist/index.js')
const coreNode = await import('../packages/core/dist/node/index.js')
const packs = [coreNode.loadCorePack()]
for (const family of ['rtx40', 'rtx30', 'rtx20', 'datacenter', 'rdna', 'apple', 'cpu']) {
  const loaded = coreNode.loadPackPath(fileURLToPath(new URL(`../plugins/${family}`, import.meta.url)), {
    layer: 'vendor',
    kind: 'plugin',
  })
  if (loaded.pack) packs.push(loaded.pack)
}
const profile = core.HardwareProfile.parse(
  JSON.parse(
    readFileSync(
      fileURLToPath(new URL('../plugins/datacenter/fixtures/dgx-h100-8x.json', import.meta.url)),
      'utf8',
    ),
  ),
)
const firstStart = performance.now()
await core.decide(packs, core.deriveFacts(profile, null, 'balanced'))
const firstMs = performance.now() - firstStart
const decideTimes = []
for (let i = 0; i < 30; i++) {
  const mode = ['conservative', 'balanced', 'extreme'][i % 3]
  const start = performance.now()
  await core.decide(packs, core.deriveFacts(profile, null, mode))
  decideTimes.push(performance.now() - start)
}
const decide = {
  firstMs: Math.round(firstMs * 10) / 10,
  reusedMs: Math.round(median(decideTimes) * 100) / 100,
}
const rules = packs.reduce((sum, pack) => sum + pack.rules.length, 0)
console.log(
  `decide over ${packs.length} packs / ${rules} rules: first call ${decide.firstMs} ms, then median ${decide.reusedMs} ms`,
)
const round = (value) => Math.round(value * 1000) / 1000
console.log(
  JSON.stringify({
    bench: 'cli-startup',
    runs: RUNS,
    node: process.version,
    cpuSeconds: Object.fromEntries(Object.entries(figures).map(([label, f]) => [label, round(f.cpu)])),
    wallSeconds: Object.fromEntries(Object.entries(figures).map(([label, f]) => [label, round(f.wall)])),
    targetCpuSeconds: Object.fromEntries(
      rows
        .filter((row) => row.limit !== undefined && row.target !== null)
        .map((row) => [row.label, round(row.limit)]),
    ),
    decide,
  }),
)
