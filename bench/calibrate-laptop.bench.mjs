// The README's laptop run, calibrated: `rigfit calibrate` with the run's flags, then `rigfit plan` with the same
// flags, export, and the trainer under the monitor right after. Prints the model's prediction, the calibrated plan's
// speed, what train.py measured, and the calibrated plan's error against it (the target: within ±20 %).
// Needs a Python with PyTorch: RIGFIT_BENCH_PYTHON, else python3 on PATH, else /usr/bin/python3.
// RIGFIT_BENCH_SECONDS sets calibrate's budget (default 30), RIGFIT_BENCH_STEPS the trainer's steps (default 50).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = fileURLToPath(new URL('..', import.meta.url))
const cli = join(repo, 'apps/cli/bin/run.js')
const python = [process.env.RIGFIT_BENCH_PYTHON, 'python3', '/usr/bin/python3'].find(
  (candidate) => candidate && spawnSync(candidate, ['-c', 'import torch']).status === 0,
)
if (!python) {
  console.log('calibrate-laptop: skipped, no Python with PyTorch (set RIGFIT_BENCH_PYTHON)')
  process.exit(0)
}
const seconds = process.env.RIGFIT_BENCH_SECONDS ?? '30'
const steps = process.env.RIGFIT_BENCH_STEPS ?? '50'
const work = mkdtempSync(join(tmpdir(), 'rigfit-bench-calibrate-'))
const env = { ...process.env, XDG_CONFIG_HOME: join(work, 'config') }
const flags = [
  '--model',
  join(repo, 'examples/pytorch/tiny-llama.json'),
  '--seq',
  '128',
  '--target-batch',
  '16',
  '--time-budget',
  '5m',
]

function rigfit(args) {
  const result = spawnSync(process.execPath, [cli, ...args], {
    cwd: work,
    env,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  })
  if (result.status !== 0)
    throw new Error(`rigfit ${args.join(' ')} exited ${result.status}:\n${result.stderr}`)
  return result
}

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
console.log(`python ${python}; load average before: ${load()}`)
const model = JSON.parse(rigfit(['plan', ...flags, '--no-calibration', '--json']).stdout)
const calibrated = JSON.parse(
  rigfit(['calibrate', ...flags, '--python', python, '--seconds', seconds, '--json']).stdout,
)
const planText = rigfit(['plan', ...flags, '--json']).stdout
const plan = JSON.parse(planText)
const planFile = join(work, 'plan.json')
writeFileSync(planFile, planText)
rigfit(['export', '--plan', planFile, '--format', 'rigfit', '--out', join(work, 'run')])
const trained = spawnSync(
  process.execPath,
  [
    cli,
    'monitor',
    '--plan',
    join(work, 'run/rigfit-plan.json'),
    '--',
    python,
    join(repo, 'examples/pytorch/train.py'),
    '--data',
    join(repo, 'examples/pytorch/README.md'),
    '--max-steps',
    steps,
  ],
  { cwd: work, env, encoding: 'utf8', maxBuffer: 64 << 20 },
)
const done = /rigfit train: done (\{.*\})/.exec(`${trained.stdout}\n${trained.stderr}`)
let measured = done ? JSON.parse(done[1]).measured_tokens_per_s : null
if (measured === null) {
  // The trainer's own summary did not come through: the steady state of the monitor's record (first step left out).
  const runs = readdirSync(join(work, 'rigfit-runs'))
  const records = readFileSync(join(work, 'rigfit-runs', runs[0], 'monitor.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  const rates = records
    .filter((r) => r.type === 'metrics' && typeof r.tokensPerSecond === 'number')
    .map((r) => r.tokensPerSecond)
    .slice(1)
  measured = rates.reduce((a, b) => a + b, 0) / rates.length
}
const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`
const predictedError = model.throughput.tokensPerSecond / measured - 1
const calibratedError = plan.throughput.tokensPerSecond / measured - 1
console.log(
  `settings: micro-batch ${plan.settings.microBatch} x accumulation ${plan.settings.gradAccum} x ${plan.settings.seq} tokens, ${plan.settings.precision}, ${plan.settings.threads} threads, on ${plan.hardware.summary}`,
)
console.log(`model alone (--no-calibration):  ${model.throughput.tokensPerSecond.toFixed(0)} tokens/s`)
console.log(
  `rigfit calibrate (${seconds} s budget): ${calibrated.record.measured.tokensPerSecond.toFixed(0)} tokens/s over ${calibrated.record.measured.steps} steps`,
)
console.log(
  `rigfit plan after calibrate:     ${plan.throughput.tokensPerSecond.toFixed(0)} tokens/s (${plan.calibration?.label})`,
)
console.log(`train.py under the monitor (${steps} steps): ${measured.toFixed(0)} tokens/s`)
console.log(
  `error against train.py: model alone ${pct(predictedError)}, calibrated ${pct(calibratedError)} (${Math.abs(calibratedError) <= 0.2 ? 'within' : 'outside'} ±20 %)`,
)
console.log(`load average after: ${load()}`)
