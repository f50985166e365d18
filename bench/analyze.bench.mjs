// Wall time of `rigfit analyze` end to end on this machine (no --benchmark), and of what-if planning.
// Target: analyze under 1.5 s. Median of several runs after one warm-up.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const cli = fileURLToPath(new URL('../apps/cli/bin/run.js', import.meta.url))
const RUNS = 5

function wallMs(args) {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0)
    throw new Error(`rigfit ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
  return ms
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const cases = [
  ['analyze', ['analyze', '--json']],
  ['analyze (human output)', ['analyze']],
  [
    'plan what-if 2x RTX 3060',
    ['plan', '--mode', 'extreme', '--gpu', 'RTX 3060 12GB', '--gpus', '2', '--json'],
  ],
  [
    'plan fine-tune llama-3.1-8b on A100 80GB',
    ['plan', '--mode', 'balanced', '--gpu', 'A100 80GB', '--model', 'llama-3.1-8b', '--json'],
  ],
]
const figures = {}
for (const [label, args] of cases) {
  wallMs(args)
  const times = Array.from({ length: RUNS }, () => wallMs(args))
  figures[label] = Math.round(median(times))
  console.log(
    `${label}: median ${figures[label]} ms over ${RUNS} runs (min ${Math.round(Math.min(...times))}, max ${Math.round(Math.max(...times))})`,
  )
}
console.log(JSON.stringify({ bench: 'analyze', medianMs: figures, targetMs: { analyze: 1500 } }))
